#!/usr/bin/env node
// Validate a batch of WGSL modules with Tint, through dawn.node's null backend (no GPU needed).
//
// stdin:  JSON list of {"name": str, "code": str}. Optional per-module fields:
//           "entryPoints": [str]   compute entry points to build pipelines for
//                                  (default: every `@compute fn` found in the code)
//           "constants": {str: number}   pipeline-overridable constant values
// usage:  node validate.mjs [--output PATH] < modules.json
//
// output: JSON list (one line, written to PATH when --output is given, else to stdout) of
//           {"name": str,
//            "errors":   [{"line": int, "column": int, "message": str}],
//            "warnings": [{"line": int, "column": int, "message": str}]}
//         in input order. line/column are 1-based; 0 means "no source location"
//         (e.g. pipeline-creation errors).
//         Dawn itself printf()s compilation logs (warnings) to stdout, possibly after our JSON
//         (stdio buffers are flushed at exit), so programs should use --output to parse reliably.
// exit:   0 when every module was checked (whether or not it is valid), 2 on bad input or when
//         no device could be created (reason on stderr).
//
// Each module goes through createShaderModule + getCompilationInfo (parse, resolve, uniformity
// analysis), then, if it has no errors, createComputePipeline({layout: 'auto'}) for every compute
// entry point (binding/layout and entry-point errors). Validation errors are captured with error
// scopes, so Dawn does not print them as uncaptured errors.

import { writeFileSync } from 'node:fs';
import { create, globals } from 'webgpu';

const WANTED_FEATURES = ['shader-f16', 'subgroups'];

function fail(msg) {
  process.stderr.write(`validate.mjs: ${msg}\n`);
  process.exit(2);
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function stripComments(code) {
  // Block comments nest in WGSL.
  let out = '';
  let depth = 0;
  for (let i = 0; i < code.length; i++) {
    const two = code.slice(i, i + 2);
    if (two === '/*') {
      depth++;
      i++;
      out += '  ';
    } else if (depth > 0 && two === '*/') {
      depth--;
      i++;
      out += '  ';
    } else if (depth > 0) {
      out += code[i] === '\n' ? '\n' : ' ';
    } else if (two === '//') {
      while (i < code.length && code[i] !== '\n') {
        out += ' ';
        i++;
      }
      if (i < code.length) out += '\n';
    } else {
      out += code[i];
    }
  }
  return out;
}

// Names of the functions carrying a @compute attribute.
function computeEntryPoints(code) {
  const src = stripComments(code);
  const attr = String.raw`@\s*[A-Za-z_]\w*\s*(?:\((?:[^()]|\([^()]*\))*\))?\s*`;
  const re = new RegExp(String.raw`((?:${attr})+)fn\s+([A-Za-z_]\w*)`, 'g');
  const names = [];
  for (const m of src.matchAll(re)) {
    if (/@\s*compute\b/.test(m[1])) names.push(m[2]);
  }
  return names;
}

// Dawn error messages carry a trailing " - While calling [Device].Create...(...)" context and,
// for WGSL errors, a copy of the source line; keep the meaningful part.
function cleanDawnMessage(message) {
  return message
    .split('\n')
    .filter((l) => l.trim() !== '' && !/^\s*- While /.test(l))
    .join('\n')
    .trim();
}

function toEntry(msg) {
  return { line: msg.lineNum ?? 0, column: msg.linePos ?? 0, message: msg.message };
}

async function validateModule(device, mod) {
  const errors = [];
  const warnings = [];
  if (typeof mod.code !== 'string') {
    return { errors: [{ line: 0, column: 0, message: 'no "code" string given' }], warnings };
  }

  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code: mod.code, label: String(mod.name) });
  const info = await module.getCompilationInfo();
  const scopeError = await device.popErrorScope();
  for (const msg of info.messages) {
    if (msg.type === 'error') errors.push(toEntry(msg));
    else if (msg.type === 'warning') warnings.push(toEntry(msg));
  }
  if (scopeError && errors.length === 0) {
    errors.push({ line: 0, column: 0, message: cleanDawnMessage(scopeError.message) });
  }
  if (errors.length > 0) return { errors, warnings };

  const entryPoints = Array.isArray(mod.entryPoints) ? mod.entryPoints : computeEntryPoints(mod.code);
  for (const entryPoint of entryPoints) {
    const compute = { module, entryPoint };
    if (mod.constants && typeof mod.constants === 'object') compute.constants = mod.constants;
    device.pushErrorScope('validation');
    device.pushErrorScope('internal');
    try {
      device.createComputePipeline({ layout: 'auto', compute, label: `${mod.name}:${entryPoint}` });
    } catch (e) {
      errors.push({ line: 0, column: 0, message: `entry point '${entryPoint}': ${e.message}` });
    }
    for (const err of [await device.popErrorScope(), await device.popErrorScope()]) {
      if (err) {
        const text = cleanDawnMessage(err.message);
        errors.push({ line: 0, column: 0, message: `entry point '${entryPoint}': ${text}` });
      }
    }
  }
  return { errors, warnings };
}

function parseArgs(argv) {
  const args = { output: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--output' && i + 1 < argv.length) args.output = argv[++i];
    else if (argv[i].startsWith('--output=')) args.output = argv[i].slice('--output='.length);
    else fail(`unknown argument ${JSON.stringify(argv[i])}; usage: validate.mjs [--output PATH]`);
  }
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  let modules;
  try {
    modules = JSON.parse(await readStdin());
  } catch (e) {
    fail(`stdin is not valid JSON: ${e.message}`);
  }
  if (!Array.isArray(modules)) fail('stdin must hold a JSON list of {"name", "code"} objects');

  Object.assign(globalThis, globals);
  const gpu = create(['backend=null']);
  const adapter = await gpu.requestAdapter();
  if (!adapter) fail('dawn.node gave no adapter for backend=null');
  const requiredFeatures = WANTED_FEATURES.filter((f) => adapter.features.has(f));
  const device = await adapter.requestDevice({ requiredFeatures });
  let uncaptured = [];
  device.addEventListener('uncapturederror', (ev) => {
    uncaptured.push(cleanDawnMessage(ev.error.message));
  });

  const results = [];
  for (const mod of modules) {
    uncaptured = [];
    let res;
    try {
      res = await validateModule(device, mod ?? {});
    } catch (e) {
      res = { errors: [{ line: 0, column: 0, message: `validator crashed: ${e.message}` }], warnings: [] };
    }
    for (const message of uncaptured) res.errors.push({ line: 0, column: 0, message });
    results.push({ name: mod?.name ?? null, errors: res.errors, warnings: res.warnings });
  }

  // dawn.node keeps the event loop alive: exit explicitly once the result is written.
  const text = JSON.stringify(results) + '\n';
  if (args.output) {
    writeFileSync(args.output, text);
    process.exit(0);
  }
  process.stdout.write(text, () => process.exit(0));
}

main().catch((e) => fail(e.stack || String(e)));
