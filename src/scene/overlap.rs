//! A sheet must not start inside an obstacle or its contact offset shell: the contact would
//! project the particles out in one step, with kinetic energy from nothing.

use crate::cloth::{Obstacle, Vec3};

/// How far \[m\] a particle may start inside an obstacle's offset shell: a hundredth of the
/// offset, and at least a micrometre (a sheet laid on the surface to rounding).
pub(crate) fn start_tolerance(obstacle: &Obstacle) -> f64 {
    (0.01 * obstacle.offset()).max(1e-6)
}

/// The first obstacle that free particles in `positions` (those not `pinned`) start inside
/// of (deeper than [`start_tolerance`]), as a message naming it, how many particles, the
/// deepest in mm and what to change; `from_card[k]`: obstacle k's offset is the card's T0/2
/// (it gives none), which the message says.
pub(crate) fn check_start(
    obstacles: &[Obstacle],
    positions: &[Vec3],
    pinned: &[bool],
    from_card: &[bool],
) -> Result<(), String> {
    for (k, o) in obstacles.iter().enumerate() {
        let tolerance = start_tolerance(o);
        let (mut inside, mut deepest) = (0usize, 0.0f64);
        let free = positions
            .iter()
            .enumerate()
            .filter(|&(p, _)| !pinned.get(p).copied().unwrap_or(false));
        for (_, x) in free {
            let (d, _) = o.distance(x);
            if d < -tolerance {
                inside += 1;
                deepest = deepest.max(-d);
            }
        }
        if inside > 0 {
            let card = from_card.get(k).copied().unwrap_or(false);
            let shell = match (o.offset() > 0.0, card) {
                (false, _) => String::new(),
                (true, false) => format!(" or its {} mm offset shell", mm(o.offset())),
                (true, true) => format!(
                    " or its {} mm offset shell (the offset is the card's T0/2: the obstacle \
                     gives no `offset`)",
                    mm(o.offset())
                ),
            };
            let lower = if card {
                "or give it an `offset` below the card's"
            } else {
                "or lower its offset"
            };
            return Err(format!(
                "obstacle {} ({}): {inside} of {} particles start inside it{shell}, the deepest \
                 {} mm deep (the contact would throw them out with energy from nothing); move \
                 the sheet ([grid] origin) or the obstacle, {lower}, so that the sheet starts \
                 outside",
                k + 1,
                o.shape.kind(),
                positions.len(),
                mm(deepest),
            ));
        }
    }
    Ok(())
}

/// A length \[m\] in mm to the micrometre, without trailing zeros.
fn mm(v: f64) -> String {
    let text = format!("{:.3}", v * 1e3);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    text.to_string()
}
