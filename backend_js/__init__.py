"""The JavaScript backend: a compiled kernel as an ES module for WebGPU, and its TypeScript
declarations.

    from pyshader_tx.backend_js import write_js, write_dts
    module = write_js(kernel.compiled())        # what `pyshader-tx --target js` writes
    declarations = write_dts(kernel.compiled())  # `--target d.ts`

Modules: `writer` (the module's text: WGSL, tables, launcher), `layout` (the kernel's
data as tables: uniform members, array elements, bind group entries), and `runtime.js`
(the launcher inlined into every module: uniform packing, uploads, folding, readback).
"""

from .writer import js_literal, write_dts, write_js

__all__ = ["write_js", "write_dts", "js_literal"]
