@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> bins: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read_write> total: array<atomic<u32>>;
var<workgroup> local: array<atomic<u32>, 16>;

fn atomic_add_f32_total(index: i32, value: f32) -> f32 {
    var old = atomicLoad(&total[index]);
    loop {
        let r = atomicCompareExchangeWeak(&total[index], old, bitcast<u32>(bitcast<f32>(old) + value));
        if r.exchanged {
            break;
        }
        old = r.old_value;
    }
    return bitcast<f32>(old);
}

@compute @workgroup_size(64)
fn atomic_histogram(@builtin(global_invocation_id) global_invocation_id: vec3u, @builtin(local_invocation_index) local_invocation_index: u32) {
    let i = global_invocation_id.x;
    let lid = local_invocation_index;
    if i < arrayLength(&x) {
        _ = atomicAdd(&local[x[i] % 16u], 1u);
        atomic_add_f32_total(0, f32(x[i]));
    }
    workgroupBarrier();
    if lid < 16u {
        let count = atomicLoad(&local[lid]);
        let r = atomicCompareExchangeWeak(&bins[lid], 0u, count);
        if !r.exchanged && count > 0u {
            _ = atomicAdd(&bins[lid], count);
        }
    }
}
