"""The frontend: Python source (read with `ast`) to the typed IR.

Pipeline (`compiler.compile_kernel`): `source` (AST with file positions, name lookup) ->
`variables` (where locals are declared) -> lowering with type checking (`statements`,
`expressions`, `operators`, `calls`, `annotations`) -> `analysis` passes. The lowering's
compile-time values (`Meta`: types, device functions, `tx`, `math`, ...) are in `meta`.
"""
