#!/usr/bin/env node
// The web example without a browser: the same module (./mandelbrot.js) and render.mjs on
// Dawn through dawn.node (npm `webgpu`). Writes the picture as a binary PPM, or with --json
// the escape counts (what tests/examples/test_web_example.py compares with numpy).
//
//   node examples/web/headless.mjs [--width W] [--height H] [--center RE IM] [--span S]
//                                  [--iterations N] [--json] [--output FILE]
//
// dawn.node is imported from $WEBGPU_MODULE, else tools/tint/node_modules/webgpu. On Linux
// without a GPU run it with Mesa 25's lavapipe (`make dawn-deps`; see tools/dawn/README.md).

import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { features, render } from './render.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const WEBGPU =
  process.env.WEBGPU_MODULE ??
  join(HERE, '..', '..', 'tools', 'tint', 'node_modules', 'webgpu', 'index.js');

function options(argv) {
  const given = { width: 320, height: 240, center: [-0.6, 0], span: 3.2, iterations: 256 };
  for (let k = 0; k < argv.length; k++) {
    const name = argv[k].replace(/^--/, '');
    if (name === 'json') given.json = true;
    else if (name === 'center') given.center = [Number(argv[++k]), Number(argv[++k])];
    else if (name === 'output') given.output = argv[++k];
    else if (name in given) given[name] = Number(argv[++k]);
    else throw new Error(`unknown option ${argv[k]}`);
  }
  return given;
}

const settings = options(process.argv.slice(2));
const { create, globals } = await import(pathToFileURL(WEBGPU).href);
Object.assign(globalThis, globals);
// Keep the GPU object referenced while its device is in use (dawn.node frees the native
// instance when V8 collects it).
globalThis.gpu = create(['backend=vulkan']);
const adapter = await globalThis.gpu.requestAdapter();
if (!adapter) throw new Error('dawn.node found no Vulkan adapter');
const device = await adapter.requestDevice({ requiredFeatures: features });
const { counts, image } = await render(device, settings);

const { width, height } = settings;
let output;
if (settings.json) {
  output = JSON.stringify({
    width,
    height,
    adapter: adapter.info.description,
    counts: [...counts],
  });
} else {
  const bytes = new Uint8Array(image.buffer);
  const rgb = Buffer.alloc(width * height * 3);
  for (let k = 0; k < width * height; k++) rgb.set(bytes.subarray(4 * k, 4 * k + 3), 3 * k);
  output = Buffer.concat([Buffer.from(`P6\n${width} ${height}\n255\n`), rgb]);
}
if (settings.output) writeFileSync(settings.output, output);
else process.stdout.write(output);
process.exitCode = 0;
setTimeout(() => process.exit(0), 0); // dawn.node keeps the event loop alive
