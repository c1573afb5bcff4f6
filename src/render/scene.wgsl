// kestrel offline frames: a sky gradient, a shadow pass from a directional key light, and
// one lit pass for cloth (two-sided), ground, obstacles and pins. Colours are linear; the
// target is sRGB.

struct Globals {
    view_proj: mat4x4<f32>,
    light_view_proj: mat4x4<f32>,
    // xyz: eye position [m]
    eye: vec4<f32>,
    // xyz: unit direction towards the key light; w: shadow filter radius (shadow-map uv)
    light: vec4<f32>,
    // xyz: up direction; w: distance at which the ground has faded into the sky [m]
    up: vec4<f32>,
    // xy: cells along the warp and the weft; z: checker tile of the ground [m]; w: bias
    grid: vec4<f32>,
};

@group(0) @binding(0) var<uniform> g: Globals;
@group(0) @binding(1) var shadow_map: texture_depth_2d;
@group(0) @binding(2) var shadow_sampler: sampler_comparison;

struct VertexIn {
    @location(0) pos: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) color: vec3<f32>,
    @location(3) uv: vec2<f32>,
    @location(4) material: u32,
};

struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) color: vec3<f32>,
    @location(3) uv: vec2<f32>,
    @location(4) @interpolate(flat) material: u32,
};

const CLOTH: u32 = 0u;
const GROUND: u32 = 1u;
const OBSTACLE: u32 = 2u;
const PIN: u32 = 3u;
const CLOTH_MAPPED: u32 = 4u;

const SKY_TOP: vec3<f32> = vec3<f32>(0.30, 0.45, 0.68);
const SKY_HORIZON: vec3<f32> = vec3<f32>(0.80, 0.84, 0.88);
const GROUND_LIGHT: vec3<f32> = vec3<f32>(0.36, 0.33, 0.30);

@vertex
fn vs_main(v: VertexIn) -> VertexOut {
    var out: VertexOut;
    out.clip = g.view_proj * vec4<f32>(v.pos, 1.0);
    out.world = v.pos;
    out.normal = v.normal;
    out.color = v.color;
    out.uv = v.uv;
    out.material = v.material;
    return out;
}

@vertex
fn vs_shadow(v: VertexIn) -> @builtin(position) vec4<f32> {
    return g.light_view_proj * vec4<f32>(v.pos, 1.0);
}

struct SkyOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) ndc_y: f32,
};

@vertex
fn vs_sky(@builtin(vertex_index) i: u32) -> SkyOut {
    let x = f32(i32(i & 1u) * 4 - 1);
    let y = f32(i32(i >> 1u) * 4 - 1);
    var out: SkyOut;
    out.clip = vec4<f32>(x, y, 1.0, 1.0);
    out.ndc_y = y;
    return out;
}

@fragment
fn fs_sky(in: SkyOut) -> @location(0) vec4<f32> {
    let t = clamp(in.ndc_y * 0.5 + 0.5, 0.0, 1.0);
    return vec4<f32>(mix(SKY_HORIZON, SKY_TOP, t * t), 1.0);
}

// Fraction of the key light reaching `world`: 16 taps of a Poisson disc, each a bilinear
// 2×2 comparison, which gives a soft penumbra.
fn lit_fraction(world: vec3<f32>, n: vec3<f32>) -> f32 {
    let p = g.light_view_proj * vec4<f32>(world + n * g.grid.w, 1.0);
    let ndc = p.xyz / p.w;
    let uv = vec2<f32>(ndc.x * 0.5 + 0.5, 0.5 - ndc.y * 0.5);
    if (uv.x < 0.0 || uv.x > 1.0 || uv.y < 0.0 || uv.y > 1.0 || ndc.z > 1.0) {
        return 1.0;
    }
    var taps = array<vec2<f32>, 16>(
        vec2<f32>(-0.942, -0.399), vec2<f32>(0.946, -0.769), vec2<f32>(-0.094, -0.929),
        vec2<f32>(0.345, 0.294), vec2<f32>(-0.916, 0.458), vec2<f32>(-0.815, -0.879),
        vec2<f32>(-0.383, 0.277), vec2<f32>(0.975, 0.756), vec2<f32>(0.443, -0.976),
        vec2<f32>(0.538, -0.474), vec2<f32>(-0.265, -0.419), vec2<f32>(0.792, 0.191),
        vec2<f32>(-0.242, 0.997), vec2<f32>(-0.814, 0.914), vec2<f32>(0.200, 0.786),
        vec2<f32>(0.144, -0.141)
    );
    var sum = 0.0;
    for (var i = 0; i < 16; i = i + 1) {
        sum = sum + textureSampleCompareLevel(shadow_map, shadow_sampler, uv + taps[i] * g.light.w, ndc.z);
    }
    return sum / 16.0;
}

// 1 on a line of the unit lattice in `p`, fading out where the lattice gets finer than a few pixels.
fn lattice(p: vec2<f32>, w: vec2<f32>, width: f32) -> f32 {
    let d = abs(fract(p - 0.5) - 0.5) / max(w, vec2<f32>(1e-6));
    let line = 1.0 - min(min(d.x, d.y) / width, 1.0);
    let fade = 1.0 - smoothstep(0.15, 0.35, max(w.x, w.y));
    return line * fade;
}

@fragment
fn fs_main(in: VertexOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    var n = normalize(in.normal);
    let view = normalize(g.eye.xyz - in.world);
    let up = g.up.xyz;
    var base = in.color;
    var shininess = 24.0;
    var spec_k = 0.12;
    var wrap = 0.0;
    // Derivatives first, in uniform control flow.
    let cells = in.uv * g.grid.xy;
    let cells_w = fwidth(cells);
    let gu = normalize(cross(up, select(vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(0.0, 0.0, 1.0), abs(up.x) > 0.9)));
    let gv = cross(up, gu);
    let q = vec2<f32>(dot(in.world, gu), dot(in.world, gv)) / g.grid.z;
    let fq = fwidth(q);
    let cloth = in.material == CLOTH || in.material == CLOTH_MAPPED;
    if (cloth) {
        // The side seen decides the normal and, without a colour map, the colour.
        if (!front) {
            n = -n;
        }
        if (in.material == CLOTH) {
            base = select(vec3<f32>(0.16, 0.33, 0.58), vec3<f32>(0.78, 0.30, 0.16), front);
        } else if (!front) {
            base = base * 0.8;
        }
        base = base * (1.0 - 0.22 * lattice(cells, cells_w, 1.2));
        spec_k = 0.06;
        shininess = 12.0;
        wrap = 0.3;
    } else if (in.material == GROUND) {
        let s = sin(q * 3.14159265);
        let aa = clamp(s / (fq * 3.14159265 * 1.5 + 1e-4), vec2<f32>(-1.0), vec2<f32>(1.0));
        let checker = 0.5 + 0.5 * aa.x * aa.y;
        base = mix(vec3<f32>(0.40, 0.39, 0.37), vec3<f32>(0.47, 0.46, 0.44), checker);
        spec_k = 0.0;
    } else if (in.material == PIN) {
        shininess = 48.0;
        spec_k = 0.5;
    }
    let l = g.light.xyz;
    let ndl = max((dot(n, l) + wrap) / (1.0 + wrap), 0.0);
    let shadow = lit_fraction(in.world, n);
    let hemi = mix(GROUND_LIGHT, SKY_HORIZON, 0.5 + 0.5 * dot(n, up));
    let h = normalize(l + view);
    let spec = spec_k * pow(max(dot(n, h), 0.0), shininess) * shadow * step(0.0, dot(n, l));
    var color = base * (0.42 * hemi + 0.95 * ndl * shadow) + vec3<f32>(spec);
    if (in.material == GROUND) {
        // Fade the ground into the horizon.
        let d = length(g.eye.xyz - in.world);
        color = mix(color, SKY_HORIZON, smoothstep(0.3 * g.up.w, g.up.w, d));
    }
    return vec4<f32>(color, 1.0);
}
