@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn specialized(@builtin(global_invocation_id) global_invocation_id: vec3u) {
    let i = global_invocation_id.x;
    if i * 4u >= arrayLength(&x) {
        return;
    }
    var local = array<f32, 4>();
    for (var k = 0u; k < 4u; k += 1u) {
        local[k] = x[i * 4u + k];
    }
    var best = local[0];
    for (var k_1 = 1; k_1 < 4; k_1 += 1) {
        best = max(best, local[k_1]);
    }
    out[i] = best;
}
