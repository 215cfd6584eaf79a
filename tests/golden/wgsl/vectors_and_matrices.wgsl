struct Params {
    m: mat3x3f,
}

@group(0) @binding(0) var<storage, read> points: array<vec3f>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(64)
fn vectors_and_matrices(@builtin(global_invocation_id) global_invocation_id: vec3u) {
    let i = global_invocation_id.x;
    if i >= arrayLength(&points) {
        return;
    }
    let p = params.m * points[i];
    var q = vec4f(p, 1.0);
    q.w = length(p.xy) + dot(p, p);
    out[i] = q.zyxw * 0.5 + vec4f(3.141592653589793);
}
