// SqueezeNet 1.0 (NHWC, OHWI filters) built with the public WebNN API from the
// weights in shared/models/squeezenet1.0_nhwc (its README gives the wiring).
import { fetchNpyAll } from './npy.js';

const FIRES = ['fire2', 'fire3', 'fire4', 'fire5', 'fire6', 'fire7', 'fire8', 'fire9'];

export function squeezenetWeightNames() {
  const names = ['conv1', 'conv10'];
  for (const f of FIRES) names.push(`${f}_squeeze`, `${f}_e1x1`, `${f}_e3x3`);
  return names.flatMap((n) => [`${n}_kernel`, `${n}_Conv2D_bias`]);
}

export function loadSqueezeNetWeights(baseUrl, onProgress = () => {}) {
  return fetchNpyAll(baseUrl, squeezenetWeightNames(), onProgress);
}

// "same-upper" padding for a stride-s conv: the extra pixel goes at the end.
function sameUpper(size, kernel, stride) {
  const total = Math.max((Math.ceil(size / stride) - 1) * stride + kernel - size, 0);
  const begin = Math.floor(total / 2);
  return [begin, total - begin];
}

// layout 'nchw': the same network with an NCHW input [1, 3, 224, 224], the
// weights transposed to OIHW, NCHW pools and channel concats on axis 1 (the
// NCHW vs NHWC benchmark, tools/bench.py --layouts).
export function buildSqueezeNet(builder, weights, layout = 'nhwc') {
  const nchw = layout === 'nchw';
  const constant = (w) => builder.constant({ dataType: 'float32', shape: w.shape }, w.data);
  const filter = (w) => (nchw ? ohwiToOihw(w) : w);
  const conv = (x, name, options = {}) => builder.conv2d(x, constant(filter(weights[`${name}_kernel`])), {
    inputLayout: layout, filterLayout: nchw ? 'oihw' : 'ohwi', bias: constant(weights[`${name}_Conv2D_bias`]), ...options,
  });
  const convRelu = (x, name, options) => builder.relu(conv(x, name, options));
  const pool = (x) => builder.maxPool2d(x, { windowDimensions: [3, 3], strides: [2, 2], layout });
  const fire = (x, name) => {
    const s = convRelu(x, `${name}_squeeze`);
    return builder.concat([convRelu(s, `${name}_e1x1`), convRelu(s, `${name}_e3x3`, { padding: [1, 1, 1, 1] })],
      nchw ? 1 : 3);
  };
  const input = builder.input('input', { dataType: 'float32', shape: nchw ? [1, 3, 224, 224] : [1, 224, 224, 3] });
  const k = weights.conv1_kernel.shape[1];
  const [pb, pe] = sameUpper(224, k, 2);
  let x = convRelu(input, 'conv1', { strides: [2, 2], padding: [pb, pe, pb, pe] });
  x = pool(x);
  x = fire(x, 'fire2'); x = fire(x, 'fire3'); x = fire(x, 'fire4');
  x = pool(x);
  x = fire(x, 'fire5'); x = fire(x, 'fire6'); x = fire(x, 'fire7'); x = fire(x, 'fire8');
  x = pool(x);
  x = fire(x, 'fire9');
  x = convRelu(x, 'conv10');
  x = builder.averagePool2d(x, { layout });  // window = the whole 13x13
  x = builder.reshape(x, [1, 1001]);
  return builder.softmax(x, 1);
}

function ohwiToOihw(w) {
  const [o, h, wd, i] = w.shape;
  const data = new Float32Array(w.data.length);
  for (let a = 0; a < o; a++) {
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < wd; x++) {
        for (let c = 0; c < i; c++) data[((a * i + c) * h + y) * wd + x] = w.data[((a * h + y) * wd + x) * i + c];
      }
    }
  }
  return { shape: [o, i, h, wd], data };
}
