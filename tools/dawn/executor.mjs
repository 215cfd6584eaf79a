#!/usr/bin/env node
// Runs kernels through their generated ES modules (`pyshader-tx --target js`) on Dawn
// (dawn.node, npm `webgpu` in tools/tint/node_modules), one request after another, for the
// test suite's Dawn executor (tests/dawn_executor.py). One process serves a whole pytest run.
//
// Requests: one JSON object per line on stdin; replies: one JSON line each on fd $REPLY_FD (default 3; Dawn
// printf()s its own messages to stdout, so replies do not go there).
//
//   {"op": "run", "module": "/abs/path/kernel.js", "args": {...}, "launch": {...}}
//       -> {"ok": true, "written": {name: base64}, "uniforms": base64, "printed": text}
//   any failure -> {"ok": false, "error": "message", "kind": "TypeError"}
//
// Arrays in args are {"$array": "Float32Array", "base64": ..., "shape": [..] (optional)};
// numbers that JSON cannot carry are {"$number": "nan" | "inf" | "-inf"}. Values are
// decoded, passed to the module's dispatch (typed arrays: updated in place), and the
// written arrays come back as base64 of their bytes; `printed` is the text the module's
// own printer gives for what the kernel printed ("" if nothing).
//
// Environment: DAWN_BACKEND (default vulkan), WEBGPU_MODULE (the path of dawn.node's
// index.js; default tools/tint/node_modules/webgpu/index.js).

import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const WEBGPU =
  process.env.WEBGPU_MODULE ?? join(HERE, '..', 'tint', 'node_modules', 'webgpu', 'index.js');
const REPLY_FD = Number(process.env.REPLY_FD ?? 3);
const WANTED_FEATURES = ['shader-f16', 'subgroups'];

const { create, globals } = await import(pathToFileURL(WEBGPU).href);
Object.assign(globalThis, globals);

function reply(message) {
  writeSync(REPLY_FD, JSON.stringify(message) + '\n');
}

// The GPU object must stay reachable while its devices are used: once the top-level code is
// done, V8 may collect an instance that no closure refers to, and dawn.node then frees the
// native instance under the device (it aborted with "std::system_error", a robust-mutex
// assertion or a segfault, depending on timing). Hence the global.
const gpu = create([`backend=${process.env.DAWN_BACKEND ?? 'vulkan'}`]);
globalThis.dawnInstance = gpu;
const adapter = await gpu.requestAdapter();
if (!adapter) {
  reply({
    ok: false,
    error: 'dawn.node gave no adapter (is Mesa 25 lavapipe set up? make dawn-deps)',
  });
  process.exit(2);
}
const requiredFeatures = WANTED_FEATURES.filter((feature) => adapter.features.has(feature));
const device = await adapter.requestDevice({ requiredFeatures });
let lost = null;
device.lost.then((info) => {
  lost = info.message;
});
let uncaptured = [];
device.addEventListener('uncapturederror', (event) => uncaptured.push(event.error.message));

const kernels = new Map(); // module path -> Promise of createKernel's result

function decode(value) {
  if (Array.isArray(value)) return value.map(decode);
  if (value === null || typeof value !== 'object') return value;
  if ('$number' in value) return { nan: NaN, inf: Infinity, '-inf': -Infinity }[value.$number];
  if ('$array' in value) {
    const bytes = Buffer.from(value.base64, 'base64');
    const copy = new Uint8Array(bytes.length);
    copy.set(bytes);
    const Type = globalThis[value.$array];
    const data = new Type(copy.buffer, 0, copy.length / Type.BYTES_PER_ELEMENT);
    return value.shape ? { data, shape: value.shape } : data;
  }
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, decode(item)]));
}

function base64(view) {
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString('base64');
}

async function run(request) {
  let kernel = kernels.get(request.module);
  if (!kernel) {
    kernel = import(pathToFileURL(request.module).href).then((module) =>
      module.createKernel(device),
    );
    kernels.set(request.module, kernel);
  }
  let made;
  try {
    made = await kernel;
  } catch (error) {
    kernels.delete(request.module);
    throw error;
  }
  const args = decode(request.args);
  const uniforms = made.packUniforms(args);
  let printed = '';
  const launch = { ...request.launch, print: (text) => (printed += text) };
  const result = await made.dispatch(args, launch);
  const written = {};
  for (const [name, data] of Object.entries(result)) written[name] = base64(data);
  return { ok: true, written, uniforms: base64(uniforms), printed };
}

async function handle(line) {
  const request = JSON.parse(line);
  if (request.op === 'run') return run(request);
  throw new Error(`unknown op ${JSON.stringify(request.op)}`);
}

// Requests are answered one at a time, in order.
let queue = Promise.resolve();
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  queue = queue.then(async () => {
    uncaptured = [];
    let message;
    try {
      message = await handle(line);
      if (uncaptured.length)
        message = { ok: false, error: uncaptured.join('\n'), kind: 'GPUError' };
    } catch (error) {
      const text = uncaptured.length ? `${error.message}\n${uncaptured.join('\n')}` : error.message;
      message = { ok: false, error: text, kind: error.constructor?.name ?? 'Error' };
    }
    if (lost !== null) message = { ok: false, error: `device lost: ${lost}`, kind: 'DeviceLost' };
    reply(message);
  });
});
lines.on('close', () => queue.then(() => process.exit(0)));
