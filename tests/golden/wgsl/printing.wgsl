@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read_write> print_buffer: array<atomic<u32>>;

fn checked_root(v: f32, global_invocation_id: vec3u) -> f32 {
    if v < 0.0 {
        let print_invocation = global_invocation_id;
        let print_value = bitcast<u32>(v);
        let print_room = arrayLength(&print_buffer) - 2u - 5u;
        var print_offset = print_room + 1u;
        if atomicLoad(&print_buffer[0u]) <= print_room {
            print_offset = atomicAdd(&print_buffer[0u], 5u);
        }
        if print_offset <= print_room {
            atomicStore(&print_buffer[print_offset + 2u], 1u);
            atomicStore(&print_buffer[print_offset + 3u], print_invocation.x);
            atomicStore(&print_buffer[print_offset + 4u], print_invocation.y);
            atomicStore(&print_buffer[print_offset + 5u], print_invocation.z);
            atomicStore(&print_buffer[print_offset + 6u], print_value);
        } else {
            _ = atomicAdd(&print_buffer[1u], 1u);
        }
    }
    return sqrt(abs(v));
}

@compute @workgroup_size(64)
fn printing(@builtin(global_invocation_id) global_invocation_id: vec3u) {
    let i = global_invocation_id.x;
    if i < arrayLength(&x) {
        out[i] = checked_root(x[i], global_invocation_id);
        let print_invocation = global_invocation_id;
        let print_value = i;
        let print_value_1 = bitcast<vec2u>(vec2f(x[i], out[i]));
        let print_value_2 = u32(i % 2u == 0u);
        let print_room = arrayLength(&print_buffer) - 2u - 8u;
        var print_offset = print_room + 1u;
        if atomicLoad(&print_buffer[0u]) <= print_room {
            print_offset = atomicAdd(&print_buffer[0u], 8u);
        }
        if print_offset <= print_room {
            atomicStore(&print_buffer[print_offset + 2u], 2u);
            atomicStore(&print_buffer[print_offset + 3u], print_invocation.x);
            atomicStore(&print_buffer[print_offset + 4u], print_invocation.y);
            atomicStore(&print_buffer[print_offset + 5u], print_invocation.z);
            atomicStore(&print_buffer[print_offset + 6u], print_value);
            atomicStore(&print_buffer[print_offset + 7u], print_value_1.x);
            atomicStore(&print_buffer[print_offset + 8u], print_value_1.y);
            atomicStore(&print_buffer[print_offset + 9u], print_value_2);
        } else {
            _ = atomicAdd(&print_buffer[1u], 1u);
        }
    }
}
