struct Params {
    grid_shape: vec3u,
}

@group(0) @binding(0) var<storage, read_write> grid: array<u32>;
@group(0) @binding(1) var<storage, read_write> bits: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

fn py_pow_f32(base: f32, exponent: f32) -> f32 {
    let magnitude = pow(abs(base), exponent);
    let odd = fract(exponent * 0.5) == 0.5;
    let integral = fract(exponent) == 0.0;
    let negative_base = select(pow(base, exponent), select(magnitude, -magnitude, odd), integral);
    return select(select(magnitude, negative_base, base < 0.0), 1.0, exponent == 0.0);
}

@compute @workgroup_size(4, 4, 4)
fn volume(@builtin(global_invocation_id) global_invocation_id: vec3u) {
    let gid = global_invocation_id;
    if gid.x < params.grid_shape.z && gid.y < params.grid_shape.y && gid.z < params.grid_shape.x {
        let v = grid[(gid.z * params.grid_shape.y + gid.y) * params.grid_shape.z + gid.x];
        let flags = ((v << 3u) ^ (v >> 1u)) | (reverseBits(v) & 255u);
        grid[(gid.z * params.grid_shape.y + gid.y) * params.grid_shape.z + gid.x] = countOneBits(flags) + extractBits(v, 2u, 4u);
        if gid.x == 0u && gid.y == 0u && gid.z == 0u {
            bits[0] = bitcast<u32>(py_pow_f32(f32(v), 0.5));
        }
    }
}
