// Pretty-print a flat typed array with a shape as nested brackets.
export function formatNumber(v) {
  if (typeof v === 'bigint') return v.toString();
  if (Number.isInteger(v)) return String(v);
  if (!isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-4 || a >= 1e6)) return v.toExponential(3);
  return String(Number(v.toPrecision(5)));
}

export function formatTensor(data, shape, maxElements = 256) {
  const n = shape.reduce((a, b) => a * b, 1);
  if (shape.length === 0) return formatNumber(data[0]);
  if (n > maxElements) {
    const head = Array.from(data.slice(0, 12), formatNumber).join(', ');
    return `[${head}, … ${n - 12} more]  (flat; ${n} elements)`;
  }
  const rec = (dim, offset) => {
    const size = shape.slice(dim + 1).reduce((a, b) => a * b, 1);
    const items = [];
    for (let i = 0; i < shape[dim]; i++) {
      items.push(dim === shape.length - 1 ? formatNumber(data[offset + i]) : rec(dim + 1, offset + i * size));
    }
    if (dim === shape.length - 1) return `[${items.join(', ')}]`;
    const pad = ' '.repeat(dim + 1);
    return `[${items.join(`,\n${pad}`)}]`;
  };
  return rec(0, 0);
}
