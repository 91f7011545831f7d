"""Writes the sequential-detection example (docs/drift.md): a reference of 4000 points of a
2-D Gaussian (centre (5, 5), standard deviation 1) in 20 sets, and one key's stream of 120
windows of 100 points: 60 from the reference's distribution, then 60 with the mean moved by
0.2 along x (a fifth of a standard deviation). Standard library only; seeded, so the files
are reproducible: python3 generate.py"""
import json
import random

rng = random.Random(37)


def points(n, dx=0.0):
    return [[round(rng.gauss(5 + dx, 1), 4), round(rng.gauss(5, 1), 4)] for _ in range(n)]


with open("reference.jsonl", "w") as f:
    for i in range(20):
        f.write(json.dumps({"set": "reference", "points": points(200)}) + "\n")

with open("stream.jsonl", "w") as f:
    for w in range(120):
        f.write(json.dumps({"set": "sensor-1", "t": 1000 * w, "points": points(100, 0.2 if w >= 60 else 0.0)}) + "\n")
