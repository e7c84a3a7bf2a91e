// Uses the whole WebNN API and the polyfill's namespace through the package's
// generated declarations; tests/dist/test_types.py type-checks it with
// `tsc --noEmit --strict` and checks that every MLGraphBuilder operation of the
// IDL is called here. Never run, only type-checked.
import webnnPolyfill, { ml } from 'webnn-polyfill';

self.WEBNN_POLYFILL_CONFIG = { runtimeBase: 'https://cdn.example/webnn-polyfill/', fastPaths: 'simd128', debug: false };

async function everything(): Promise<number> {
  const same: ML = navigator.ml;
  const context: MLContext = await ml.createContext({ powerPreference: 'high-performance', accelerated: false, deviceType: 'gpu' });
  const viaGlobal: MLContext = await same.createContext();
  const lost: Promise<MLContextLostInfo> = context.lost;
  const accelerated: boolean = context.accelerated;
  const limits: MLOpSupportLimits = context.opSupportLimits();
  const conv2dTypes: MLDataTypeList | undefined = limits.conv2d?.input?.dataTypes;
  const rank: number | undefined = limits.input?.rankRange?.max;
  const layout: MLInputOperandLayout | undefined = limits.preferredInputLayout;

  const b = new MLGraphBuilder(context);
  const f32: MLOperandDescriptor = { dataType: 'float32', shape: [1, 3, 8, 8] };
  const x: MLOperand = b.input('x', f32);
  const dataType: MLOperandDataType = x.dataType;
  const shape: readonly number[] = x.shape;
  const w = b.constant({ dataType: 'float32', shape: [4, 3, 3, 3] }, new Float32Array(108));
  const one = b.constant('float32', 1);
  const big = b.constant('int64', 5n);
  const s = b.constant({ dataType: 'float32', shape: [] }, new Float32Array([2]).buffer);
  const i32 = b.constant({ dataType: 'int32', shape: [2] }, new Int32Array([0, 1]));
  const u8 = b.constant({ dataType: 'uint8', shape: [] }, new Uint8Array([0]));

  const c = b.conv2d(x, w, { padding: [1, 1, 1, 1], strides: [1, 1], dilations: [1, 1], groups: 1,
                             inputLayout: 'nchw', filterLayout: 'oihw', bias: one, label: 'conv' });
  const ct = b.convTranspose2d(c, w, { outputSizes: [8, 8], filterLayout: 'iohw' });
  const bn = b.batchNormalization(c, one, one, { scale: one, bias: one, axis: 1, epsilon: 1e-5 });
  const y = b.relu(b.add(bn, ct));
  const ops: MLOperand[] = [
    b.argMin(y, 1, { keepDimensions: true, outputDataType: 'int64' }), b.argMax(y, 1),
    b.cast(y, 'float16'), b.clamp(y, { minValue: 0, maxValue: 6 }), b.concat([y, y], 1),
    b.cumulativeSum(y, 0, { exclusive: true, reversed: false }),
    b.sub(y, s), b.mul(y, s), b.div(y, s), b.max(y, s), b.min(y, s), b.pow(y, s),
    b.equal(y, s), b.notEqual(y, s), b.greater(y, s), b.greaterOrEqual(y, s), b.lesser(y, s), b.lesserOrEqual(y, s),
    b.logicalNot(u8), b.logicalAnd(u8, u8), b.logicalOr(u8, u8), b.logicalXor(u8, u8), b.isNaN(y), b.isInfinite(y),
    b.abs(y), b.ceil(y), b.cos(y), b.erf(y), b.exp(y), b.floor(y), b.identity(y), b.log(y), b.neg(y),
    b.reciprocal(y), b.roundEven(y), b.sin(y), b.sign(y), b.sqrt(y), b.tan(y),
    b.dequantizeLinear(u8, s, u8), b.quantizeLinear(y, s, u8),
    b.elu(y, { alpha: 1 }), b.expand(s, [2, 2]), b.gather(y, i32, { axis: 1 }), b.gatherElements(y, i32, { axis: 0 }),
    b.gatherND(y, i32), b.gelu(y), b.gemm(s, s, { aTranspose: true, bTranspose: false, alpha: 1, beta: 1, c: s }),
    b.gruCell(s, s, s, s, 4, { bias: s, recurrentBias: s, resetAfter: true, layout: 'zrn', activations: ['sigmoid', 'tanh'] }),
    b.hardSigmoid(y, { alpha: 0.2, beta: 0.5 }), b.hardSwish(y), b.instanceNormalization(y, { layout: 'nhwc' }),
    b.layerNormalization(y, { axes: [1], epsilon: 1e-5 }), b.leakyRelu(y, { alpha: 0.01 }),
    b.linear(y, { alpha: 2, beta: 1 }), b.matmul(s, s),
    b.pad(y, [0, 0, 1, 1], [0, 0, 1, 1], { mode: 'reflection', value: 0 }),
    b.averagePool2d(y, { windowDimensions: [2, 2], outputShapeRounding: 'ceil' }), b.l2Pool2d(y), b.maxPool2d(y, { outputSizes: [4, 4] }),
    b.prelu(y, s), b.reduceL1(y, { axes: [1], keepDimensions: true }), b.reduceL2(y), b.reduceLogSum(y), b.reduceLogSumExp(y),
    b.reduceMax(y), b.reduceMean(y), b.reduceMin(y), b.reduceProduct(y), b.reduceSum(y), b.reduceSumSquare(y),
    b.resample2d(y, { mode: 'linear', scales: [2, 2], axes: [2, 3] }), b.reshape(y, [3, 64]), b.reverse(y, { axes: [0] }),
    b.scatterElements(y, i32, y, { axis: 0 }), b.scatterND(y, i32, y), b.sigmoid(y),
    b.slice(y, [0, 0, 0, 0], [1, 1, 4, 4], { strides: [1, 1, 1, 1] }), b.softmax(y, 1), b.softplus(y), b.softsign(y),
    b.tanh(y), b.tile(y, [1, 1, 2, 2]), b.transpose(y, { permutation: [0, 2, 3, 1] }), b.triangular(y, { upper: false, diagonal: 0 }),
    b.where(u8, y, y), big,
  ];
  const parts: MLOperand[] = b.split(y, [1, 2], { axis: 1 });
  const halves: MLOperand[] = b.split(y, 3);
  const [h, c2]: MLOperand[] = b.lstmCell(s, s, s, s, s, 4, { peepholeWeight: s, layout: 'iofg', activations: ['sigmoid', 'tanh', 'tanh'] });
  const gruOut = b.gru(s, s, s, 2, 4, { direction: 'both', returnSequence: true, initialHiddenState: s });
  const lstmOut = b.lstm(s, s, s, 2, 4, { direction: 'backward', initialCellState: s });
  const graph: MLGraph = await b.build({ y, first: ops[0], part: parts[0], half: halves[0], h, c2, g: gruOut[0], l: lstmOut[0] });

  const input: MLTensor = await context.createTensor({ dataType: 'float32', shape: [1, 3, 8, 8], writable: true });
  const output = await context.createTensor({ dataType: 'float32', shape: [1, 4, 8, 8], readable: true });
  const constant = await context.createConstantTensor({ dataType: 'float32', shape: [2] }, new Float32Array(2));
  const flags: boolean[] = [input.readable, input.writable, constant.constant];
  const tensorShape: readonly number[] = output.shape;
  const tensorType: MLOperandDataType = output.dataType;
  b.constant(constant);
  context.writeTensor(input, new Float32Array(192));
  const named: MLNamedTensors = { x: input };
  context.dispatch(graph, named, { y: output });
  const bytes: ArrayBuffer = await context.readTensor(output);
  const none: void = await context.readTensor(output, new Float32Array(256));
  input.destroy();
  graph.destroy();
  context.destroy();

  // The polyfill's namespace, as a global and as the module's default export.
  const version: string = webnnPolyfill.version;
  const base: string = globalThis.webnnPolyfill.runtimeBase;
  const ready: boolean = await webnnPolyfill.ready();
  const startMs: number | null | undefined = webnnPolyfill.engineStats.startMs;
  const cfg: WebNNPolyfillConfig = webnnPolyfill.config;
  const model: WebNNPolyfillNNEFModel = await webnnPolyfill.loadNNEF(viaGlobal, 'models/mobilenet.tgz', { gelu: 'exact', quantization: true });
  const inputInfo: WebNNPolyfillTensorInfo = model.inputs['input'];
  await webnnPolyfill.loadNNEF(viaGlobal, { 'graph.nnef': 'version 1.0;', 'w.dat': new Uint8Array(4) });
  const exported: WebNNPolyfillNNEFExport = await webnnPolyfill.exportNNEF(model.graph, { name: 'G' });
  const archive: Uint8Array = exported.archive;
  void [lost, accelerated, conv2dTypes, rank, layout, dataType, shape, flags, tensorShape, tensorType, bytes, none,
        version, base, ready, startMs, cfg, inputInfo, archive];
  return ops.length;
}

void everything;
