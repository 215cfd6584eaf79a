@group(0) @binding(0) var<storage, read> values: array<i32>;
@group(0) @binding(1) var<storage, read_write> out: array<i32>;

fn py_floor_div_i32(a: i32, b: i32) -> i32 {
    let quotient = a / b;
    let remainder = select(a - quotient * b, 0, b == 0);
    let round_down = (remainder != 0) & ((remainder < 0) != (b < 0));
    return select(quotient, quotient - 1, round_down);
}

fn py_mod_i32(a: i32, b: i32) -> i32 {
    let remainder = select(a - (a / b) * b, 0, b == 0);
    let wrong_sign = (remainder != 0) & ((remainder < 0) != (b < 0));
    return select(remainder, remainder + b, wrong_sign);
}

fn collatz_steps(start: u32) -> u32 {
    var n = start;
    var steps = 0u;
    while n != 1u && steps < 1000u {
        n = select(3u * n + 1u, n / 2u, n % 2u == 0u);
        steps += 1u;
    }
    return steps;
}

@compute @workgroup_size(64)
fn control_flow(@builtin(global_invocation_id) global_invocation_id: vec3u) {
    let i = global_invocation_id.x;
    if i >= arrayLength(&out) {
        return;
    }
    var total = 0;
    for (var k = 0; k < 10; k += 1) {
        if k == 3 {
            continue;
        }
        if k > 7 {
            break;
        }
        total += py_floor_div_i32(values[i], k + 1) - py_mod_i32(values[i], k - 5);
    }
    for (var k_1 = 8; k_1 > 0; k_1 -= 2) {
        total -= k_1;
    }
    var a = total;
    var b = values[i];
    let a_new = b;
    let b_new = a;
    a = a_new;
    b = b_new;
    out[i] = a - b + i32(collatz_steps(i + 1u));
}
