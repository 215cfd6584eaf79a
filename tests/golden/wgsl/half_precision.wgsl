enable f16;

struct Params {
    x_shape: u32,
    out_shape: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f16>;
@group(0) @binding(1) var<storage, read_write> out: array<f16>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(64)
fn half_precision(@builtin(global_invocation_id) global_invocation_id: vec3u) {
    let i = global_invocation_id.x;
    if i < params.x_shape {
        let h = x[i] * 2.0h + 1.0h;
        out[i] = clamp(h, -100.0h, 100.0h);
    }
}
