// Wrong calls the declarations must reject: each line below has to be a type
// error (`@ts-expect-error` itself fails the check when a line is accepted).
import { ml } from 'webnn-polyfill';

async function wrong(): Promise<void> {
  // @ts-expect-error not a power preference
  await ml.createContext({ powerPreference: 'fastest' });
  // @ts-expect-error not a device type
  await ml.createContext({ deviceType: 'tpu' });
  const context = await ml.createContext();
  // @ts-expect-error MLContext has no constructor
  new MLContext();
  const b = new MLGraphBuilder(context);
  // @ts-expect-error shape is required in a descriptor
  b.input('x', { dataType: 'float32' });
  // @ts-expect-error not a data type
  const x = b.input('x', { dataType: 'float33', shape: [2] }) as MLOperand;
  // @ts-expect-error conv2d needs a filter
  b.conv2d(x);
  // @ts-expect-error padding is a sequence of numbers
  b.conv2d(x, x, { padding: 'same' });
  // @ts-expect-error split returns a sequence, not one operand
  const one: MLOperand = b.split(x, 2);
  // @ts-expect-error dispatch binds tensors, not arrays
  context.dispatch(await b.build({ y: b.relu(x) }), { x: new Float32Array(2) }, {});
  // @ts-expect-error operand shapes are read-only
  x.shape.push(3);
  // @ts-expect-error the namespace's version is a constant
  webnnPolyfill.version = '9';
  void one;
}

void wrong;
