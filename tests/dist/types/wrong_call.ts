// A plainly wrong call without @ts-expect-error: tsc must fail on this file
// (tests/dist/test_types.py checks that it does, with TS2345 on relu's argument).
import { ml } from 'webnn-polyfill';

export async function wrong(): Promise<void> {
  const b = new MLGraphBuilder(await ml.createContext());
  b.relu('x');
}
