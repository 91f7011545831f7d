"""Writes the correlated-windows example (docs/drift.md, Correlated windows): a sensor whose
mean wanders from window to window, x-mean an AR(1) across windows (φ = 0.9, stationary
standard deviation 0.3, the points' own standard deviation 1). reference.jsonl is 300 past
windows of 50 points, one per line, in arrival order; stream.jsonl is the next 150 windows
of one key: 100 that wander the same way, then 50 in which the y spread grows by half
(×1.5), a change the wandering never makes. Standard library only; seeded, so the files are
reproducible: python3 generate.py"""
import json
import math
import random

rng = random.Random(549)
PHI, TAU, N = 0.9, 0.3, 50
mu = TAU * rng.gauss(0, 1)  # the stationary law


def window(sy=1.0):
    global mu
    mu = PHI * mu + math.sqrt(1 - PHI * PHI) * TAU * rng.gauss(0, 1)
    return [[round(rng.gauss(5 + mu, 1), 4), round(rng.gauss(5, sy), 4)] for _ in range(N)]


with open("reference.jsonl", "w") as f:
    for _ in range(300):
        f.write(json.dumps({"set": "reference", "points": window()}) + "\n")

with open("stream.jsonl", "w") as f:
    for w in range(150):
        f.write(json.dumps({"set": "sensor-1", "t": 1000 * w, "points": window(1.5 if w >= 100 else 1.0)}) + "\n")
