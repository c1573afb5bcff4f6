// kestrel offline frames: a shadow pass from a directional key light, the light reaching the
// ground (filtered once per frame into a texture over the shadow map's square), then one pass
// for cloth (two-sided), obstacles, pins, walls, the ground and last the sky behind them. Colours are
// computed linear and written sRGB-encoded to a plain RGBA8 target (the encoding is done
// here: software rasterisers convert every sample of an sRGB target, which costs more than
// the shading).

struct Globals {
    view_proj: mat4x4<f32>,
    light_view_proj: mat4x4<f32>,
    // Light clip space → world.
    light_inverse: mat4x4<f32>,
    // xyz: eye position [m]
    eye: vec4<f32>,
    // xyz: unit direction towards the key light; w: shadow filter radius (shadow-map uv)
    light: vec4<f32>,
    // xyz: up direction; w: distance at which the ground has faded into the sky [m]
    up: vec4<f32>,
    // xy: cells along the warp and the weft; z: checker tile of the ground [m]; w: bias
    grid: vec4<f32>,
    // The ground plane dot(xyz, p) = w [m]; xyz is its unit normal.
    ground: vec4<f32>,
};

@group(0) @binding(0) var<uniform> g: Globals;
@group(0) @binding(1) var shadow_map: texture_depth_2d;
@group(0) @binding(2) var shadow_sampler: sampler_comparison;
// Fraction of the key light reaching the ground, over the shadow map's uv square.
@group(1) @binding(0) var ground_light: texture_2d<f32>;
@group(1) @binding(1) var ground_sampler: sampler;

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
// Cloth whose vertex colour is its exit radiance (precomputed radiance transfer).
const CLOTH_RADIANCE: u32 = 5u;

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

struct FullscreenOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) ndc: vec2<f32>,
};

// A triangle over the whole target, at the far plane (depth 1).
@vertex
fn vs_fullscreen(@builtin(vertex_index) i: u32) -> FullscreenOut {
    let x = f32(i32(i & 1u) * 4 - 1);
    let y = f32(i32(i >> 1u) * 4 - 1);
    var out: FullscreenOut;
    out.clip = vec4<f32>(x, y, 1.0, 1.0);
    out.ndc = vec2<f32>(x, y);
    return out;
}

@fragment
fn fs_sky(in: FullscreenOut) -> @location(0) vec4<f32> {
    let t = clamp(in.ndc.y * 0.5 + 0.5, 0.0, 1.0);
    return encode(mix(SKY_HORIZON, SKY_TOP, t * t));
}

// Linear colour → sRGB-encoded output. The power 1/2.4 is fitted by square roots (within
// 0.25/255 of the exact curve above the linear toe), much cheaper than pow on a CPU.
fn encode(c: vec3<f32>) -> vec4<f32> {
    let x = clamp(c, vec3<f32>(0.0), vec3<f32>(1.0));
    let s1 = sqrt(x);
    let s2 = sqrt(s1);
    let s3 = sqrt(s2);
    let curve = 0.662002687 * s1 + 0.684122060 * s2 - 0.323583601 * s3 - 0.0225411470 * x;
    return vec4<f32>(select(curve, 12.92 * x, x <= vec3<f32>(0.0031308)), 1.0);
}

// Shadow-map uv (x right, y down) and depth of a world point.
fn light_uvz(world: vec3<f32>) -> vec3<f32> {
    let p = g.light_view_proj * vec4<f32>(world, 1.0);
    let ndc = p.xyz / p.w;
    return vec3<f32>(ndc.x * 0.5 + 0.5, 0.5 - ndc.y * 0.5, ndc.z);
}

// The 16 taps of a Poisson disc of radius 1 (in units of the filter radius g.light.w).
const TAPS = array<vec2<f32>, 16>(
    vec2<f32>(-0.942, -0.399), vec2<f32>(0.946, -0.769), vec2<f32>(-0.094, -0.929),
    vec2<f32>(0.345, 0.294), vec2<f32>(-0.916, 0.458), vec2<f32>(-0.815, -0.879),
    vec2<f32>(-0.383, 0.277), vec2<f32>(0.975, 0.756), vec2<f32>(0.443, -0.976),
    vec2<f32>(0.538, -0.474), vec2<f32>(-0.265, -0.419), vec2<f32>(0.792, 0.191),
    vec2<f32>(-0.242, 0.997), vec2<f32>(-0.814, 0.914), vec2<f32>(0.200, 0.786),
    vec2<f32>(0.144, -0.141)
);

// Four probes around the disc, at radius 1.5 on the diagonals: a straight shadow edge that
// reaches any tap separates two of them (every tap lies within 1.0 of the centre along the
// axes, where the probes' square is 1.06 out). A curved edge can slip between them.
const PROBES = array<vec2<f32>, 4>(
    vec2<f32>(-1.06, -1.06), vec2<f32>(1.06, -1.06), vec2<f32>(1.06, 1.06), vec2<f32>(-1.06, 1.06)
);

// Shadow-map uv and depth of `world` pushed off its surface by the bias along `n`; z > 1
// or uv outside the unit square: outside the shadow map (lit).
fn shadow_lookup(world: vec3<f32>, n: vec3<f32>) -> vec3<f32> {
    return light_uvz(world + n * g.grid.w);
}

fn outside(q: vec3<f32>) -> bool {
    return q.x < 0.0 || q.x > 1.0 || q.y < 0.0 || q.y > 1.0 || q.z > 1.0;
}

// Fraction of the key light reaching `world` (normal `n`): the four probes first; where they
// agree (fully lit or fully shadowed) that is the answer, else the 16 taps, each a bilinear
// 2×2 comparison, which gives a soft penumbra. A loop, because a software rasteriser leaves
// a loop as soon as every lane has, while both arms of an `if` run.
fn lit_fraction(world: vec3<f32>, n: vec3<f32>) -> f32 {
    let q = shadow_lookup(world, n);
    if (outside(q)) {
        return 1.0;
    }
    // Receiver-plane depth: each tap compares against the depth of the surface's tangent
    // plane under it, not the depth at the centre, so a surface tilted to the light does not
    // shadow itself. Light clip space is affine in world (orthographic): moving by (dx, dy,
    // dz) in it moves the world point by dx·E_x + dy·E_y + dz·E_z.
    let ex = dot(n, g.light_inverse[0].xyz);
    let ey = dot(n, g.light_inverse[1].xyz);
    let ez = dot(n, g.light_inverse[2].xyz);
    let ez_safe = select(ez, 1e-6, abs(ez) < 1e-6);
    // ∂z/∂u and ∂z/∂v with u = (x + 1)/2, v = (1 − y)/2; only on surfaces that face the
    // light (elsewhere the tangent plane runs into the surface's own occluders), and steep
    // slopes clamped.
    let facing = dot(n, g.light.xyz) > 0.05;
    let slope = select(vec2<f32>(0.0), clamp(vec2<f32>(-2.0 * ex, 2.0 * ey) / ez_safe, vec2<f32>(-3.0), vec2<f32>(3.0)), facing);
    var probes = PROBES;
    var taps = TAPS;
    var probed = 0.0;
    var sum = 0.0;
    var i = 0;
    loop {
        // One sample per pass (both arms of an `if` would run).
        let at = select(taps[max(i - 4, 0)], probes[min(i, 3)], i < 4);
        let offset = at * g.light.w;
        // Curved surfaces leave their tangent plane: a bias growing with the tap's distance
        // keeps the inside of a fold from shadowing itself.
        let z = q.z + dot(slope, offset) - 0.5 * length(offset);
        let lit = textureSampleCompareLevel(shadow_map, shadow_sampler, q.xy + offset, z);
        probed = probed + select(0.0, lit, i < 4);
        sum = sum + select(lit, 0.0, i < 4);
        i = i + 1;
        if (i == 4 && (probed == 0.0 || probed == 4.0)) {
            sum = probed * 4.0;
            break;
        }
        if (i == 20) {
            break;
        }
    }
    return sum / 16.0;
}

// One texel of the ground's light: the ground point seen by this shadow-map texel (where the
// light ray through it meets the ground plane), filtered as `lit_fraction` does.
@fragment
fn fs_ground_light(in: FullscreenOut) -> @location(0) vec4<f32> {
    let a4 = g.light_inverse * vec4<f32>(in.ndc, 0.0, 1.0);
    let b4 = g.light_inverse * vec4<f32>(in.ndc, 1.0, 1.0);
    let a = a4.xyz / a4.w;
    let b = b4.xyz / b4.w;
    let n = g.ground.xyz;
    let along = dot(n, b - a);
    let t = (g.ground.w - dot(n, a)) / select(along, 1.0, abs(along) < 1e-9);
    let world = a + (b - a) * t;
    return vec4<f32>(lit_fraction(world, n), 0.0, 0.0, 1.0);
}

// 1 on a line of the unit lattice in `p`, fading out where the lattice gets finer than a few pixels.
fn lattice(p: vec2<f32>, w: vec2<f32>, width: f32) -> f32 {
    let d = abs(fract(p - 0.5) - 0.5) / max(w, vec2<f32>(1e-6));
    let line = 1.0 - min(min(d.x, d.y) / width, 1.0);
    let fade = 1.0 - smoothstep(0.15, 0.35, max(w.x, w.y));
    return line * fade;
}

// The ground's checker at `world`: tiles of g.grid.z [m], anti-aliased by their footprint.
// Call in uniform control flow (derivatives).
fn checker(world: vec3<f32>) -> vec3<f32> {
    let up = g.up.xyz;
    let gu = normalize(cross(up, select(vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(0.0, 0.0, 1.0), abs(up.x) > 0.9)));
    let gv = cross(up, gu);
    let q = vec2<f32>(dot(world, gu), dot(world, gv)) / g.grid.z;
    let fq = fwidth(q);
    let s = sin(q * 3.14159265);
    let aa = clamp(s / (fq * 3.14159265 * 1.5 + 1e-4), vec2<f32>(-1.0), vec2<f32>(1.0));
    let c = 0.5 + 0.5 * aa.x * aa.y;
    return mix(vec3<f32>(0.40, 0.39, 0.37), vec3<f32>(0.47, 0.46, 0.44), c);
}

// A matte ground-like surface of colour `base` lit with `shadow` of the key light, faded
// into the horizon with distance.
fn matte(base: vec3<f32>, world: vec3<f32>, n: vec3<f32>, shadow: f32) -> vec3<f32> {
    let ndl = max(dot(n, g.light.xyz), 0.0);
    let hemi = mix(GROUND_LIGHT, SKY_HORIZON, 0.5 + 0.5 * dot(n, g.up.xyz));
    let color = base * (0.42 * hemi + 0.95 * ndl * shadow);
    let d = length(g.eye.xyz - world);
    return mix(color, SKY_HORIZON, smoothstep(0.3 * g.up.w, g.up.w, d));
}

// The ground plane: its light comes from the ground-light texture (one filtered fetch).
@fragment
fn fs_ground(in: VertexOut) -> @location(0) vec4<f32> {
    let base = checker(in.world);
    let q = light_uvz(in.world);
    let lit = textureSampleLevel(ground_light, ground_sampler, q.xy, 0.0).r;
    let inside = all(q.xy >= vec2<f32>(0.0)) && all(q.xy <= vec2<f32>(1.0));
    let shadow = select(1.0, lit, inside);
    return encode(matte(base, in.world, normalize(in.normal), shadow));
}

// A plane obstacle other than the ground (a wall): checkered, with its own shadow.
@fragment
fn fs_plane(in: VertexOut) -> @location(0) vec4<f32> {
    let n = normalize(in.normal);
    let base = checker(in.world);
    return encode(matte(base, in.world, n, lit_fraction(in.world, n)));
}

// Cloth (two-sided), obstacles and pins.
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
    if (in.material == CLOTH_RADIANCE) {
        return encode(in.color * (1.0 - 0.22 * lattice(cells, cells_w, 1.2)));
    }
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
    } else if (in.material == PIN) {
        shininess = 48.0;
        spec_k = 0.5;
    }
    let shadow = lit_fraction(in.world, n);
    let l = g.light.xyz;
    let ndl = max((dot(n, l) + wrap) / (1.0 + wrap), 0.0);
    let hemi = mix(GROUND_LIGHT, SKY_HORIZON, 0.5 + 0.5 * dot(n, up));
    let h = normalize(l + view);
    let spec = spec_k * pow(max(dot(n, h), 0.0), shininess) * shadow * step(0.0, dot(n, l));
    return encode(base * (0.42 * hemi + 0.95 * ndl * shadow) + vec3<f32>(spec));
}
