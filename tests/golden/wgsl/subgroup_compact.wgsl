enable subgroups;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read_write> counts: array<u32>;
@group(0) @binding(3) var<storage, read_write> sums: array<f32>;

@compute @workgroup_size(64)
fn subgroup_compact(@builtin(global_invocation_id) global_invocation_id: vec3u, @builtin(subgroup_size) subgroup_size: u32, @builtin(subgroup_invocation_id) subgroup_invocation_id: u32) {
    let i = global_invocation_id.x;
    var value = 0.0;
    if i < arrayLength(&x) {
        value = x[i];
    }
    let keep = value > 0.0;
    let slot = subgroupExclusiveAdd(select(0u, 1u, keep));
    let start = i - subgroup_invocation_id;
    if keep {
        out[start + slot] = value;
    }
    let ballot = subgroupBallot(keep);
    let total = subgroupAdd(value);
    if subgroup_invocation_id == 0u {
        let group = start / subgroup_size;
        let bits = countOneBits(ballot);
        counts[group] = bits.x + bits.y + bits.z + bits.w;
        sums[group] = total;
    }
}
