// A page's own code, importing the polyfill like any npm package.
import webnnPolyfill, { ml } from 'webnn-polyfill';

async function run() {
  const context = await ml.createContext();
  const builder = new MLGraphBuilder(context);
  const x = builder.input('x', { dataType: 'float32', shape: [4] });
  const graph = await builder.build({ y: builder.relu(builder.add(x, builder.constant({ dataType: 'float32', shape: [4] }, new Float32Array([1, 1, 1, 1])))) });
  const [tx, ty] = await Promise.all([
    context.createTensor({ dataType: 'float32', shape: [4], writable: true }),
    context.createTensor({ dataType: 'float32', shape: [4], readable: true }),
  ]);
  context.writeTensor(tx, new Float32Array([-3, -1, 0, 2]));
  context.dispatch(graph, { x: tx }, { y: ty });
  const y = Array.from(new Float32Array(await context.readTensor(ty)));
  document.querySelector('#out').textContent = `relu(x + 1) = [${y}] (webnn-polyfill ${webnnPolyfill.version})`;
  return { y, version: webnnPolyfill.version, runtimeBase: webnnPolyfill.runtimeBase };
}

window.result = run().catch((e) => ({ error: `${e.name}: ${e.message}` }));
