struct Params {
    image_shape: vec2u,
    out_shape: vec2u,
}

@group(0) @binding(0) var<storage, read> image: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

fn clamp_index(i: i32, n: i32) -> i32 {
    return min(max(i, 0), n - 1);
}

@compute @workgroup_size(8, 8)
fn blur_rows(@builtin(global_invocation_id) global_invocation_id: vec3u) {
    var WEIGHTS = array<f32, 3>(0.25, 0.5, 0.25);
    let gid = global_invocation_id;
    let row = gid.y;
    let col = gid.x;
    if row >= params.image_shape.x || col >= params.image_shape.y {
        return;
    }
    var acc = 0.0;
    for (var k = 0; k < 3; k += 1) {
        let c = clamp_index(i32(col) + k - 1, i32(params.image_shape.y));
        acc += WEIGHTS[k] * image[row * params.image_shape.y + u32(c)];
    }
    out[row * params.out_shape.y + col] = acc;
}
