@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
var<workgroup> tile: array<f32, 256>;

@compute @workgroup_size(256)
fn block_sums(@builtin(global_invocation_id) global_invocation_id: vec3u, @builtin(local_invocation_index) local_invocation_index: u32, @builtin(workgroup_id) workgroup_id: vec3u) {
    let lid = local_invocation_index;
    let i = global_invocation_id.x;
    tile[lid] = 0.0;
    if i < arrayLength(&x) {
        tile[lid] = x[i];
    }
    workgroupBarrier();
    var stride = 128u;
    while stride > 0u {
        if lid < stride {
            tile[lid] += tile[lid + stride];
        }
        workgroupBarrier();
        stride /= 2u;
    }
    let total = workgroupUniformLoad(&tile[0]);
    if lid == 0u {
        out[workgroup_id.x] = total;
    }
}
