// MobileNetV2 1.0/224 (NHWC) built with the public WebNN API from the TF-Lite
// tensors in shared/models/mobilenetv2_nhwc/weights (Const_N.npy + *_bias.npy).
// Which Const_N is which layer follows the WebNN model test page
// webnn/model-tests/image-classification/mobilenet_nhwc.html (BruceDai/wpt-mt).
//
// The logits weights (Const_222, 1280 -> 1001) are not distributed: they are
// synthesized here from a seeded PRNG, so the model is good for latency only;
// its labels are meaningless.
import { fetchNpyAll } from './npy.js';

// Inverted residual blocks: [expand 1x1, depthwise 3x3, project 1x1] Const ids, stride, residual add.
// Block 0 ("expanded_conv") has no expansion layer.
const BLOCKS = [
  [null, '238', '167', 1, false],
  ['165', '99', '73', 2, false],
  ['3', '119', '115', 1, true],
  ['255', '216', '157', 2, false],
  ['227', '221', '193', 1, true],
  ['243', '102', '215', 1, true],
  ['226', '163', '229', 2, false],
  ['104', '254', '143', 1, true],
  ['25', '142', '202', 1, true],
  ['225', '129', '98', 1, true],
  ['169', '2', '246', 1, false],
  ['162', '87', '106', 1, true],
  ['52', '22', '40', 1, true],
  ['114', '65', '242', 2, false],
  ['203', '250', '92', 1, true],
  ['133', '130', '258', 1, true],
  ['60', '248', '100', 1, false],
];
const STEM = '90';        // 3x3 stride-2 conv, 3 -> 32
const HEAD = '71';        // 1x1 conv, 320 -> 1280
const LOGITS = '222';     // 1x1 conv, 1280 -> 1001 (missing: synthesized)
export const LOGITS_SHAPE = [1001, 1, 1, 1280];
export const LOGITS_SEED = 20240601;

const blockPrefix = (i) => (i === 0 ? 'expanded_conv' : `expanded_conv_${i}`);
const bias = (layer) => `MobilenetV2_${layer}_bias`;

// [{kernel, bias}] layer list in graph order (names without .npy).
function layers() {
  const out = [{ kernel: `Const_${STEM}`, bias: bias('Conv_Conv2D') }];
  BLOCKS.forEach(([e, d, p], i) => {
    const b = blockPrefix(i);
    if (e) out.push({ kernel: `Const_${e}`, bias: bias(`${b}_expand_Conv2D`) });
    out.push({ kernel: `Const_${d}`, bias: bias(`${b}_depthwise_depthwise`) });
    out.push({ kernel: `Const_${p}`, bias: bias(`${b}_project_Conv2D`) });
  });
  out.push({ kernel: `Const_${HEAD}`, bias: bias('Conv_1_Conv2D') });
  out.push({ kernel: `Const_${LOGITS}`, bias: bias('Logits_Conv2d_1c_1x1_Conv2D') });
  return out;
}

export function mobilenetV2WeightNames({ includeLogits = false } = {}) {
  return layers().flatMap((l) => [l.kernel, l.bias]).filter((n) => includeLogits || n !== `Const_${LOGITS}`);
}

// mulberry32: a small, fast, seeded PRNG (same numbers in every browser).
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The missing logits kernel: Glorot-uniform values from a fixed seed.
export function synthesizeLogitsKernel(shape = LOGITS_SHAPE, seed = LOGITS_SEED) {
  const n = shape.reduce((a, b) => a * b, 1);
  const limit = Math.sqrt(6 / (shape[0] + shape[3]));
  const rand = seededRandom(seed);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = (rand() * 2 - 1) * limit;
  return { dtype: '<f4', shape: shape.slice(), data, synthesized: true };
}

export async function loadMobileNetV2Weights(baseUrl, onProgress = () => {}) {
  const weights = await fetchNpyAll(baseUrl, mobilenetV2WeightNames(), onProgress);
  weights[`Const_${LOGITS}`] = synthesizeLogitsKernel();
  return weights;
}

// "same-upper" padding [begin, end] along one axis (TF-Lite SAME).
function sameUpper(size, kernel, stride) {
  const total = Math.max((Math.ceil(size / stride) - 1) * stride + kernel - size, 0);
  const begin = Math.floor(total / 2);
  return [begin, total - begin];
}

export function buildMobileNetV2(builder, weights) {
  const constant = (w) => builder.constant({ dataType: 'float32', shape: w.shape }, w.data);
  const conv = (x, kernel, biasName, { stride = 1, depthwise = false, relu6 = true } = {}) => {
    const w = weights[kernel];
    const [kh, kw] = [w.shape[1], w.shape[2]];  // OHWI and IHWO both keep H, W at 1, 2
    const [, h, wd] = x.shape;
    const [pt, pb] = sameUpper(h, kh, stride);
    const [pl, pr] = sameUpper(wd, kw, stride);
    const options = {
      inputLayout: 'nhwc', filterLayout: depthwise ? 'ihwo' : 'ohwi', strides: [stride, stride],
      padding: [pt, pb, pl, pr], bias: constant(weights[biasName]),
    };
    if (depthwise) options.groups = w.shape[3];
    const y = builder.conv2d(x, constant(w), options);
    return relu6 ? builder.clamp(y, { minValue: 0, maxValue: 6 }) : y;
  };
  const input = builder.input('input', { dataType: 'float32', shape: [1, 224, 224, 3] });
  let x = conv(input, `Const_${STEM}`, bias('Conv_Conv2D'), { stride: 2 });
  BLOCKS.forEach(([e, d, p, stride, residual], i) => {
    const b = blockPrefix(i);
    let y = x;
    if (e) y = conv(y, `Const_${e}`, bias(`${b}_expand_Conv2D`));
    y = conv(y, `Const_${d}`, bias(`${b}_depthwise_depthwise`), { stride, depthwise: true });
    y = conv(y, `Const_${p}`, bias(`${b}_project_Conv2D`), { relu6: false });
    x = residual ? builder.add(x, y) : y;
  });
  x = conv(x, `Const_${HEAD}`, bias('Conv_1_Conv2D'));
  x = builder.averagePool2d(x, { layout: 'nhwc' });  // window = the whole 7x7
  x = conv(x, `Const_${LOGITS}`, bias('Logits_Conv2d_1c_1x1_Conv2D'), { relu6: false });
  x = builder.reshape(x, [1, 1001]);
  return builder.softmax(x, 1);
}

// The layer table, for other engines (the TF.js comparison builds the same network).
export const MOBILENETV2_ARCH = { STEM, HEAD, LOGITS, BLOCKS, blockPrefix, bias };
