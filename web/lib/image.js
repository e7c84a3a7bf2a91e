// Image -> NHWC float32 tensor [1, size, size, 3] with (x - mean) / std per channel.
export async function imageToTensor(source, size = 224, mean = 127.5, std = 127.5) {
  const bitmap = source instanceof ImageBitmap ? source : await createImageBitmap(source);
  const canvas = typeof OffscreenCanvas !== 'undefined' ? new OffscreenCanvas(size, size) : Object.assign(document.createElement('canvas'), { width: size, height: size });
  const g = canvas.getContext('2d');
  g.drawImage(bitmap, 0, 0, size, size);
  const rgba = g.getImageData(0, 0, size, size).data;
  const out = new Float32Array(size * size * 3);
  for (let i = 0, j = 0; i < rgba.length; i += 4, j += 3) {
    out[j] = (rgba[i] - mean) / std;
    out[j + 1] = (rgba[i + 1] - mean) / std;
    out[j + 2] = (rgba[i + 2] - mean) / std;
  }
  return out;
}

export async function fetchImageTensor(url, size = 224) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return imageToTensor(await r.blob(), size);
}

export async function fetchLabels(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return (await r.text()).split('\n').map((s) => s.trim()).filter((s, i, a) => s || i < a.length - 1);
}

export function topK(probabilities, labels, k = 5) {
  return Array.from(probabilities, (p, i) => [p, i]).sort((a, b) => b[0] - a[0]).slice(0, k)
    .map(([p, i]) => ({ index: i, label: labels[i], probability: p }));
}
