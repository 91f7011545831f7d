// Downstream example: read distfeat feature records from Kafka, build the Gram matrix
// K = Z Zᵀ of one feature column, list each set's nearest sets, and fit a kernel ridge
// classifier (one-vs-rest, λ chosen by leave-one-out).
//
//   npm ci && node index.js
//
// Environment: BROKERS (default 127.0.0.1:9092), TOPIC (features), COLUMN (mmd; any feature
// column, e.g. hdd_js or l2), GROUP (a fresh consumer group per run by default), TIMEOUT_MS
// (60000: give up reading after this long).
// It reads every partition from the beginning up to the end offsets at start, keeps the
// latest record per set (delivery is at least once: a replayed window has the same bytes),
// and prints a human-readable report followed by one JSON line with the results.
//
// Labels: in this example a set's class is its ID up to the first '-' (ring-007 → ring), as
// examples/sets.jsonl names them. With your own data, bring your labels from elsewhere.
import { Kafka, logLevel } from 'kafkajs';
import { tableFromIPC } from 'apache-arrow';

const brokers = (process.env.BROKERS || '127.0.0.1:9092').split(',');
const topic = process.env.TOPIC || 'features';
const column = process.env.COLUMN || 'mmd';
const group = process.env.GROUP || `distfeat-downstream-${process.pid}-${Date.now()}`;
const timeoutMs = Number(process.env.TIMEOUT_MS || 60000);

// readFeatures returns Map(set → Float64Array) with the latest vector of `column` per set.
async function readFeatures() {
  const kafka = new Kafka({ clientId: 'distfeat-downstream', brokers, logLevel: logLevel.ERROR });
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  // Partitions still to read up to their end offset (high watermark) at start.
  const pending = new Map();
  for (const o of offsets) {
    if (BigInt(o.high) > BigInt(o.low)) pending.set(o.partition, BigInt(o.high));
  }
  const vectors = new Map();
  if (pending.size === 0) return vectors;
  const consumer = kafka.consumer({ groupId: group });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms reading ${topic}`)), timeoutMs);
      const done = (err) => {
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      };
      consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            try {
              const table = tableFromIPC(message.value);
              const col = table.getChild(column);
              if (!col) throw new Error(`no column ${column} in the feature records (have ${table.schema.fields.map((f) => f.name)})`);
              for (let row = 0; row < table.numRows; row++) {
                vectors.set(table.getChild('set').get(row), Float64Array.from(col.get(row).toArray()));
              }
            } catch (err) {
              done(err);
              return;
            }
            const end = pending.get(partition);
            if (end !== undefined && BigInt(message.offset) + 1n >= end) {
              pending.delete(partition);
              if (pending.size === 0) done();
            }
          },
        })
        .catch(done);
    });
  } finally {
    await consumer.disconnect();
  }
  return vectors;
}

function gram(Z) {
  const n = Z.length;
  const K = Array.from({ length: n }, () => new Float64Array(n));
  for (let i = 0; i < n; i++) {
    for (let j = i; j < n; j++) {
      let s = 0;
      for (let k = 0; k < Z[i].length; k++) s += Z[i][k] * Z[j][k];
      K[i][j] = s;
      K[j][i] = s;
    }
  }
  return K;
}

// nearest lists, for set i, the other sets by feature-space distance ‖zᵢ − zⱼ‖² = Kᵢᵢ + Kⱼⱼ − 2Kᵢⱼ.
function nearest(K, i) {
  return K.map((_, j) => j)
    .filter((j) => j !== i)
    .map((j) => ({ j, d: K[i][i] + K[j][j] - 2 * K[i][j] }))
    .sort((a, b) => a.d - b.d || a.j - b.j);
}

// cholesky factors the SPD matrix A = L Lᵀ (lower triangle, in place copy).
function cholesky(A) {
  const n = A.length;
  const L = Array.from({ length: n }, () => new Float64Array(n));
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let s = A[i][j];
      for (let k = 0; k < j; k++) s -= L[i][k] * L[j][k];
      if (i === j) {
        if (!(s > 0)) throw new Error('matrix is not positive definite');
        L[i][i] = Math.sqrt(s);
      } else {
        L[i][j] = s / L[j][j];
      }
    }
  }
  return L;
}

// solve returns A⁻¹b given the Cholesky factor of A.
function solve(L, b) {
  const n = L.length;
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = b[i];
    for (let k = 0; k < i; k++) s -= L[i][k] * y[k];
    y[i] = s / L[i][i];
  }
  const x = new Float64Array(n);
  for (let i = n - 1; i >= 0; i--) {
    let s = y[i];
    for (let k = i + 1; k < n; k++) s -= L[k][i] * x[k];
    x[i] = s / L[i][i];
  }
  return x;
}

// ridgeLOO fits kernel ridge α = (K + λI)⁻¹Y (one column per class, targets ±1) and returns
// the leave-one-out predictions ŷ₋ᵢ = yᵢ − (yᵢ − (HY)ᵢ)/(1 − Hᵢᵢ), H = K(K + λI)⁻¹.
function ridgeLOO(K, Y, lambda) {
  const n = K.length;
  const A = K.map((row, i) => row.map((v, j) => v + (i === j ? lambda : 0)));
  const L = cholesky(A);
  const Ainv = [];
  for (let j = 0; j < n; j++) {
    const e = new Float64Array(n);
    e[j] = 1;
    Ainv.push(solve(L, e)); // column j of A⁻¹ (A symmetric: also row j)
  }
  const hdiag = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let k = 0; k < n; k++) s += K[i][k] * Ainv[i][k];
    hdiag[i] = s;
  }
  return Y.map((y) => {
    const alpha = solve(L, y);
    const fit = K.map((row) => row.reduce((s, v, k) => s + v * alpha[k], 0));
    return y.map((yi, i) => yi - (yi - fit[i]) / (1 - hdiag[i]));
  });
}

async function main() {
  const vectors = await readFeatures();
  const sets = [...vectors.keys()].sort();
  if (sets.length < 3) throw new Error(`only ${sets.length} sets on ${topic}`);
  const Z = sets.map((s) => vectors.get(s));
  const K = gram(Z);
  const classOf = (id) => id.split('-')[0];
  const classes = [...new Set(sets.map(classOf))].sort();

  console.log(`${sets.length} sets, column ${column} (D = ${Z[0].length}), classes ${classes.join(', ')}`);
  const nn = {};
  let same = 0;
  sets.forEach((s, i) => {
    const near = nearest(K, i);
    nn[s] = sets[near[0].j];
    if (classOf(nn[s]) === classOf(s)) same++;
    if (i < 6) console.log(`  ${s}: nearest ${near.slice(0, 3).map((x) => sets[x.j]).join(', ')}`);
  });

  const Y = classes.map((c) => sets.map((s) => (classOf(s) === c ? 1 : -1)));
  const meanDiag = K.reduce((s, row, i) => s + row[i], 0) / sets.length;
  let best = { acc: -1, lambda: 0 };
  for (let e = -6; e <= 1; e++) {
    const lambda = meanDiag * 10 ** e;
    const loo = ridgeLOO(K, Y, lambda);
    let correct = 0;
    sets.forEach((s, i) => {
      let arg = 0;
      for (let c = 1; c < classes.length; c++) if (loo[c][i] > loo[arg][i]) arg = c;
      if (classes[arg] === classOf(s)) correct++;
    });
    const acc = correct / sets.length;
    if (acc >= best.acc) best = { acc, lambda };
  }
  console.log(`nearest set of the same class: ${same}/${sets.length}`);
  console.log(`ridge (one-vs-rest, λ = ${best.lambda.toPrecision(3)} by leave-one-out): LOO accuracy ${best.acc.toFixed(3)}`);
  console.log(
    JSON.stringify({
      sets: sets.length,
      column,
      features: Z[0].length,
      nearest_same_class: same / sets.length,
      ridge_lambda: best.lambda,
      ridge_loo_accuracy: best.acc,
      nearest: nn,
    }),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
