// The gallery's two classifiers built directly with TensorFlow.js (tfjs-core
// ops, any backend) from the same .npy weights, for the benchmark's
// side-by-side comparison. `tf` is the global from tf-core.min.js.
//
// TF "SAME" padding puts the odd pixel at the end, i.e. WebNN "same-upper",
// so it matches the WebNN graphs exactly. Convolutions use tf.fused.* (bias
// and activation in one kernel), as TF.js models do.
import { MOBILENETV2_ARCH } from './mobilenetv2.js';

const FIRES = ['fire2', 'fire3', 'fire4', 'fire5', 'fire6', 'fire7', 'fire8', 'fire9'];

// OHWI -> HWIO (conv2d), [1, H, W, C] -> [H, W, C, 1] (depthwise): both are a [1, 2, 3, 0] transpose.
function filterTensor(tf, w) {
  return tf.tidy(() => tf.transpose(tf.tensor(w.data, w.shape, 'float32'), [1, 2, 3, 0]));
}
const biasTensor = (tf, b) => tf.tensor(b.data, b.shape, 'float32');

// Upload the weights; returns {predict(x: tf.Tensor4D) -> tf.Tensor2D, dispose()}.
export function tfSqueezeNet(tf, weights) {
  const p = {};
  const names = ['conv1', 'conv10', ...FIRES.flatMap((f) => [`${f}_squeeze`, `${f}_e1x1`, `${f}_e3x3`])];
  for (const n of names) p[n] = { filter: filterTensor(tf, weights[`${n}_kernel`]), bias: biasTensor(tf, weights[`${n}_Conv2D_bias`]) };
  const conv = (x, n, strides = 1) => tf.fused.conv2d({ x, ...p[n], strides, pad: 'same', activation: 'relu' });
  const pool = (x) => tf.maxPool(x, 3, 2, 'valid');
  const fire = (x, f) => {
    const s = conv(x, `${f}_squeeze`);
    return tf.concat([conv(s, `${f}_e1x1`), conv(s, `${f}_e3x3`)], 3);
  };
  const predict = (input) => {
    let x = pool(conv(input, 'conv1', 2));
    x = fire(x, 'fire2'); x = fire(x, 'fire3'); x = fire(x, 'fire4');
    x = pool(x);
    x = fire(x, 'fire5'); x = fire(x, 'fire6'); x = fire(x, 'fire7'); x = fire(x, 'fire8');
    x = pool(x);
    x = fire(x, 'fire9');
    x = conv(x, 'conv10');
    return tf.softmax(tf.reshape(tf.mean(x, [1, 2]), [1, 1001]));
  };
  return { predict, dispose: () => Object.values(p).forEach((t) => { t.filter.dispose(); t.bias.dispose(); }) };
}

export function tfMobileNetV2(tf, weights) {
  const { STEM, HEAD, LOGITS, BLOCKS, blockPrefix, bias } = MOBILENETV2_ARCH;
  const tensors = [];
  const layer = (kernel, biasName) => {
    const l = { filter: filterTensor(tf, weights[`Const_${kernel}`]), bias: biasTensor(tf, weights[biasName]) };
    tensors.push(l.filter, l.bias);
    return l;
  };
  const stem = layer(STEM, bias('Conv_Conv2D'));
  const blocks = BLOCKS.map(([e, d, p, stride, residual], i) => {
    const b = blockPrefix(i);
    return {
      expand: e && layer(e, bias(`${b}_expand_Conv2D`)),
      dw: layer(d, bias(`${b}_depthwise_depthwise`)),
      project: layer(p, bias(`${b}_project_Conv2D`)),
      stride, residual,
    };
  });
  const head = layer(HEAD, bias('Conv_1_Conv2D'));
  const logits = layer(LOGITS, bias('Logits_Conv2d_1c_1x1_Conv2D'));
  const conv = (x, l, activation, strides = 1) => tf.fused.conv2d({ x, ...l, strides, pad: 'same', activation });
  const predict = (input) => {
    let x = conv(input, stem, 'relu6', 2);
    for (const blk of blocks) {
      let y = blk.expand ? conv(x, blk.expand, 'relu6') : x;
      y = tf.fused.depthwiseConv2d({ x: y, ...blk.dw, strides: blk.stride, pad: 'same', activation: 'relu6' });
      y = conv(y, blk.project, 'linear');
      x = blk.residual ? tf.add(x, y) : y;
    }
    x = conv(x, head, 'relu6');
    x = tf.mean(x, [1, 2], true);
    x = conv(x, logits, 'linear');
    return tf.softmax(tf.reshape(x, [1, 1001]));
  };
  return { predict, dispose: () => tensors.forEach((t) => t.dispose()) };
}

export const TF_MODELS = { squeezenet: tfSqueezeNet, mobilenetv2: tfMobileNetV2 };
