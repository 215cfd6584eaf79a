"""A host engine that runs a pyshader-tx output pair (naga WGSL + JSON reflection) with
raw wgpu-py and numpy only, never importing pyshader_tx: the way another engine uses them.

    python raw_wgpu_host.py KERNEL.naga.wgsl KERNEL.json ARGS.npz PARAMS.json THREADS OUT.npz

ARGS.npz holds the arrays by parameter name; a struct array is given field by field as
`name/field` (built here with the member offsets and stride of the JSON). PARAMS.json
holds the uniform parameters. THREADS is `N` or `X,Y[,Z]`. OUT.npz receives the arrays
the kernel writes (`access` read_write), struct arrays again field by field.
"""

import json
import struct
import sys

import numpy as np
import wgpu

SCALARS = {"f32": ("<f4", "<f"), "i32": ("<i4", "<i"), "u32": ("<u4", "<I"), "f16": ("<f2", "<e")}
VECTOR_SUFFIXES = {"f": "f32", "i": "i32", "u": "u32", "h": "f16"}


def scalar_and_count(type_name: str) -> tuple:
    """("f32", 1) for f32, ("f32", 3) for vec3f."""
    if type_name in SCALARS:
        return type_name, 1
    if type_name.startswith("vec") and type_name[-1] in VECTOR_SUFFIXES:
        return VECTOR_SUFFIXES[type_name[-1]], int(type_name[3])
    raise NotImplementedError(f"this host does not handle {type_name}")


def numpy_dtype(layout: dict) -> np.dtype:
    """The numpy dtype of an array element, laid out as the JSON says."""
    if "members" in layout:
        members = layout["members"]
        return np.dtype(
            {
                "names": [m["name"] for m in members],
                "formats": [numpy_dtype({**m, "stride": m["size"]}) for m in members],
                "offsets": [m["offset"] for m in members],
                "itemsize": layout["stride"],
            }
        )
    scalar, count = scalar_and_count(layout["type"])
    base = np.dtype(SCALARS[scalar][0]) if count == 1 else np.dtype((SCALARS[scalar][0], count))
    if base.itemsize == layout["stride"]:
        return base
    return np.dtype({"names": ["value"], "formats": [base], "itemsize": layout["stride"]})


def pack_value(buffer: bytearray, offset: int, layout: dict, value) -> None:
    """Write `value` into the uniform buffer at `offset` as the member layout says."""
    if "members" in layout:
        for member in layout["members"]:
            pack_value(buffer, offset + member["offset"], member, value[member["name"]])
        return
    scalar, count = scalar_and_count(layout["type"])
    fmt = SCALARS[scalar][1]
    values = [value] if count == 1 else list(value)
    step = struct.calcsize(fmt)
    for i, component in enumerate(values):
        component = int(component) if fmt[-1] in "iI" else float(component)
        struct.pack_into(fmt, buffer, offset + i * step, component)


def main(wgsl_path, json_path, args_path, params_path, threads_text, out_path) -> None:
    code = open(wgsl_path, encoding="utf-8").read()
    info = json.load(open(json_path, encoding="utf-8"))
    inputs = dict(np.load(args_path))
    params = json.load(open(params_path, encoding="utf-8"))
    threads = [int(v) for v in threads_text.split(",")]
    threads += [1] * (3 - len(threads))

    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    device = adapter.request_device_sync(required_features=info["features"])

    arrays = {}
    for binding in info["bindings"]:
        if binding["kind"] != "storage":
            continue
        name = binding["name"]
        dtype = numpy_dtype(binding["element"])
        if dtype.names and name not in inputs:  # a struct array, given field by field
            fields = {k.split("/", 1)[1]: v for k, v in inputs.items() if k.startswith(name + "/")}
            array = np.zeros(len(next(iter(fields.values()))), dtype)
            for field, values in fields.items():
                array[field] = values
        elif dtype.names:  # a padded element (vec3f in an array)
            array = np.zeros(inputs[name].shape[0], dtype)
            array["value"] = inputs[name]
        else:
            array = np.ascontiguousarray(inputs[name], dtype)
        arrays[name] = array

    entries, layout_entries, buffers = [], [], {}
    for binding in info["bindings"]:
        if binding["kind"] == "storage":
            data = arrays[binding["name"]].tobytes()
            data += bytes(-len(data) % 4 or (4 if not data else 0))
            usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
            kind = "storage" if binding["access"] == "read_write" else "read-only-storage"
        else:
            block = info["uniforms"]
            buffer = bytearray(block["buffer_size"])
            for member in block["members"]:
                source = member["source"]
                if source["value"] == "shape":
                    value = arrays[source["param"]].shape
                    value = value[0] if len(value) == 1 else value
                else:
                    value = params[source["param"]]
                pack_value(buffer, member["offset"], member, value)
            data = bytes(buffer)
            usage = wgpu.BufferUsage.UNIFORM
            kind = "uniform"
        buffer = device.create_buffer_with_data(data=data, usage=usage)
        buffers[binding["name"]] = buffer
        entries.append(
            {"binding": binding["binding"], "resource": {"buffer": buffer, "size": buffer.size}}
        )
        layout_entries.append(
            {
                "binding": binding["binding"],
                "visibility": wgpu.ShaderStage.COMPUTE,
                "buffer": {"type": kind},
            }
        )
    assert all(b["group"] == 0 for b in info["bindings"])
    bind_group_layout = device.create_bind_group_layout(entries=layout_entries)
    pipeline = device.create_compute_pipeline(
        layout=device.create_pipeline_layout(bind_group_layouts=[bind_group_layout]),
        compute={
            "module": device.create_shader_module(code=code),
            "entry_point": info["entry_point"],
        },
    )
    bind_group = device.create_bind_group(layout=bind_group_layout, entries=entries)
    size = info["workgroup_size"]
    counts = [-(-n // s) for n, s in zip(threads, size)]
    encoder = device.create_command_encoder()
    compute_pass = encoder.begin_compute_pass()
    compute_pass.set_pipeline(pipeline)
    compute_pass.set_bind_group(0, bind_group)
    compute_pass.dispatch_workgroups(*counts)
    compute_pass.end()
    device.queue.submit([encoder.finish()])

    results = {}
    for binding in info["bindings"]:
        if binding["kind"] == "storage" and binding["access"] == "read_write":
            name = binding["name"]
            array = arrays[name]
            raw = device.queue.read_buffer(buffers[name])[: array.nbytes]
            array = np.frombuffer(raw, array.dtype).reshape(array.shape)
            if array.dtype.names == ("value",):
                results[name] = array["value"]
            elif array.dtype.names:
                for field in array.dtype.names:
                    results[f"{name}/{field}"] = array[field]
            else:
                results[name] = array
    np.savez(out_path, **results)
    assert "pyshader_tx" not in sys.modules, "the host engine must not use pyshader_tx"


if __name__ == "__main__":
    main(*sys.argv[1:])
