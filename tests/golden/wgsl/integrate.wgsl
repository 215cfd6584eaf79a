struct Particle {
    position: vec3f,
    mass: f32,
    velocity: vec3f,
}

struct Params {
    dt: f32,
}

@group(0) @binding(0) var<storage, read_write> particles: array<Particle>;
@group(0) @binding(1) var<uniform> params: Params;

fn gravity(p: Particle, dt: f32) -> vec3f {
    return p.velocity + vec3f(0.0, -9.81, 0.0) * dt;
}

@compute @workgroup_size(64)
fn integrate(@builtin(global_invocation_id) global_invocation_id: vec3u) {
    let i = global_invocation_id.x;
    if i >= arrayLength(&particles) {
        return;
    }
    var p = particles[i];
    p.velocity = gravity(p, params.dt);
    p.position += p.velocity * params.dt;
    if p.position.y < 0.0 {
        p.position.y = -p.position.y;
        p.velocity.y *= -0.5;
    }
    particles[i] = p;
}
