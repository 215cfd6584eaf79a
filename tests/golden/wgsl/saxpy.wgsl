struct Params {
    a: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(64)
fn saxpy(@builtin(global_invocation_id) global_invocation_id: vec3u) {
    let i = global_invocation_id.x;
    if i < arrayLength(&out) {
        out[i] = params.a * x[i] + y[i];
    }
}
