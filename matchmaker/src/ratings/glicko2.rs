//! Glicko-2, one rating period (Glickman, "Example of the Glicko-2 system",
//! 2012, steps 1-8), on the Glicko scale (1500 / 350 / 0.06).
//!
//! Written out rather than taken from `skillratings` because its volatility
//! iteration (step 5) has no bound: here the Illinois iteration stops on an
//! exact root, on convergence (ε = 1e-6, Glickman's value), or after
//! [`MAX_ITERATIONS`] with [`Glicko2Error::NoConvergence`] instead of
//! hanging. The tests check these results against `skillratings`.

use serde::{Deserialize, Serialize};

/// Glicko-2 scale factor between the Glicko and Glicko-2 scales (173.7178).
pub const SCALE: f64 = 173.7178;
/// Convergence tolerance of step 5 (Glickman).
pub const EPSILON: f64 = 1e-6;
/// Most iterations of either loop of step 5 before giving up.
pub const MAX_ITERATIONS: u32 = 200;

/// A player's rating on the Glicko scale.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// r, e.g. 1500.
    pub rating: f64,
    /// RD, e.g. 350.
    pub deviation: f64,
    /// σ, e.g. 0.06.
    pub volatility: f64,
}

/// Why a rating period could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Glicko2Error {
    /// The volatility iteration did not converge within [`MAX_ITERATIONS`].
    #[error("the Glicko-2 volatility iteration did not converge")]
    NoConvergence,
    /// An input or the result is not a finite number.
    #[error("a rating, deviation or volatility is not finite and positive")]
    NotFinite,
}

impl Rating {
    /// Whether this is a usable rating: finite, deviation and volatility > 0.
    pub fn is_valid(&self) -> bool {
        self.rating.is_finite()
            && self.deviation.is_finite()
            && self.deviation > 0.0
            && self.volatility.is_finite()
            && self.volatility > 0.0
    }

    /// The rating after `periods` whole idle rating periods: deviation grows
    /// as `φ' = sqrt(φ² + periods·σ²)` (Glickman step 6 with no games),
    /// capped at `max_deviation`; rating and volatility unchanged.
    pub fn idle(self, periods: f64, max_deviation: f64) -> Rating {
        if periods <= 0.0 {
            return self;
        }
        let phi = self.deviation / SCALE;
        let grown = (phi * phi + periods * self.volatility * self.volatility).sqrt() * SCALE;
        Rating {
            deviation: grown.min(max_deviation.max(self.deviation)),
            ..self
        }
    }
}

/// One result of a rating period: the opponent and the score (1 win,
/// 0.5 draw, 0 loss).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Game {
    /// The opponent as it stood before the period.
    pub opponent: Rating,
    /// 1.0, 0.5 or 0.0.
    pub score: f64,
}

fn g(phi: f64) -> f64 {
    1.0 / (1.0 + 3.0 * phi * phi / (std::f64::consts::PI * std::f64::consts::PI)).sqrt()
}

fn expected(mu: f64, mu_j: f64, g_j: f64) -> f64 {
    1.0 / (1.0 + (-g_j * (mu - mu_j)).exp())
}

/// Rates `player` over one period of `games` with system constant `tau`
/// (Glickman steps 1-8). No games: the deviation grows by one period.
///
/// # Errors
/// [`Glicko2Error::NotFinite`] for a non-finite input or result,
/// [`Glicko2Error::NoConvergence`] if step 5 does not converge.
pub fn rate(player: Rating, games: &[Game], tau: f64) -> Result<Rating, Glicko2Error> {
    if !player.is_valid() || !tau.is_finite() || games.iter().any(|g| !g.opponent.is_valid()) {
        return Err(Glicko2Error::NotFinite);
    }
    if games.is_empty() {
        return Ok(player.idle(1.0, f64::INFINITY));
    }
    // Step 2: to the Glicko-2 scale.
    let mu = (player.rating - 1500.0) / SCALE;
    let phi = player.deviation / SCALE;
    let sigma = player.volatility;

    // Steps 3 and 4: estimated variance v and improvement delta.
    let (mut v_inv, mut sum) = (0.0, 0.0);
    for game in games {
        let mu_j = (game.opponent.rating - 1500.0) / SCALE;
        let g_j = g(game.opponent.deviation / SCALE);
        let e = expected(mu, mu_j, g_j);
        v_inv += g_j * g_j * e * (1.0 - e);
        sum += g_j * (game.score - e);
    }
    let v = 1.0 / v_inv;
    let delta = v * sum;

    // Step 5: new volatility.
    let sigma_new = new_volatility(sigma, phi, v, delta, tau)?;

    // Steps 6-8.
    let phi_star = (phi * phi + sigma_new * sigma_new).sqrt();
    let phi_new = 1.0 / (1.0 / (phi_star * phi_star) + 1.0 / v).sqrt();
    let mu_new = mu + phi_new * phi_new * sum;
    let out = Rating {
        rating: SCALE * mu_new + 1500.0,
        deviation: SCALE * phi_new,
        volatility: sigma_new,
    };
    if out.is_valid() {
        Ok(out)
    } else {
        Err(Glicko2Error::NotFinite)
    }
}

/// Step 5 by the Illinois algorithm, bounded.
fn new_volatility(sigma: f64, phi: f64, v: f64, delta: f64, tau: f64) -> Result<f64, Glicko2Error> {
    let a0 = (sigma * sigma).ln();
    let (phi2, delta2) = (phi * phi, delta * delta);
    let f = |x: f64| {
        let ex = x.exp();
        ex * (delta2 - phi2 - v - ex) / (2.0 * (phi2 + v + ex).powi(2)) - (x - a0) / (tau * tau)
    };
    let mut a = a0;
    let mut b = if delta2 > phi2 + v {
        (delta2 - phi2 - v).ln()
    } else {
        let mut k = 1.0;
        let mut iterations = 0;
        while f(a0 - k * tau) < 0.0 {
            k += 1.0;
            iterations += 1;
            if iterations > MAX_ITERATIONS {
                return Err(Glicko2Error::NoConvergence);
            }
        }
        a0 - k * tau
    };
    let (mut fa, mut fb) = (f(a), f(b));
    let mut iterations = 0;
    while (b - a).abs() > EPSILON {
        if fa == 0.0 {
            return Ok((a / 2.0).exp());
        }
        if fb == 0.0 {
            return Ok((b / 2.0).exp());
        }
        iterations += 1;
        if iterations > MAX_ITERATIONS || !(fa.is_finite() && fb.is_finite()) {
            return Err(Glicko2Error::NoConvergence);
        }
        let c = a + (a - b) * fa / (fb - fa);
        let fc = f(c);
        if fc == 0.0 {
            // Landed exactly on the root.
            return Ok((c / 2.0).exp());
        }
        if fc * fb < 0.0 {
            a = b;
            fa = fb;
        } else {
            fa /= 2.0;
        }
        b = c;
        fb = fc;
    }
    Ok((a / 2.0).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(rating: f64, deviation: f64, volatility: f64) -> Rating {
        Rating {
            rating,
            deviation,
            volatility,
        }
    }

    #[test]
    fn glickmans_worked_example() {
        let games = [
            Game {
                opponent: r(1400.0, 30.0, 0.06),
                score: 1.0,
            },
            Game {
                opponent: r(1550.0, 100.0, 0.06),
                score: 0.0,
            },
            Game {
                opponent: r(1700.0, 300.0, 0.06),
                score: 0.0,
            },
        ];
        let out = rate(r(1500.0, 200.0, 0.06), &games, 0.5).unwrap();
        assert!((out.rating - 1464.06).abs() < 0.01, "{out:?}");
        assert!((out.deviation - 151.52).abs() < 0.01, "{out:?}");
        assert!((out.volatility - 0.05999).abs() < 0.00001, "{out:?}");
    }

    #[test]
    fn two_new_players_one_beats_the_other() {
        let new = r(1500.0, 350.0, 0.06);
        let w = rate(
            new,
            &[Game {
                opponent: new,
                score: 1.0,
            }],
            0.5,
        )
        .unwrap();
        let l = rate(
            new,
            &[Game {
                opponent: new,
                score: 0.0,
            }],
            0.5,
        )
        .unwrap();
        assert!((w.rating - 1662.31).abs() < 0.01, "{w:?}");
        assert!((l.rating - 1337.69).abs() < 0.01, "{l:?}");
        assert!((w.deviation - 290.32).abs() < 0.01 && (l.deviation - 290.32).abs() < 0.01);
    }

    #[test]
    fn idle_period_grows_deviation_only_up_to_the_cap() {
        let p = r(1700.0, 200.0, 0.06);
        let idle = p.idle(1.0, 350.0);
        assert_eq!(idle.rating, 1700.0);
        assert!((idle.deviation - 200.27).abs() < 0.01, "{idle:?}");
        assert_eq!(p.idle(1.0e9, 350.0).deviation, 350.0);
    }

    #[test]
    fn root_finder_stops_on_an_exact_root_and_never_loops_forever() {
        // delta² == phi² + v is the branch edge; and a degenerate tau.
        for tau in [1e-12, 0.5, 1e6] {
            let out = rate(
                r(1500.0, 350.0, 0.06),
                &[Game {
                    opponent: r(1500.0, 350.0, 0.06),
                    score: 0.5,
                }],
                tau,
            );
            assert!(out.is_ok() || out == Err(Glicko2Error::NoConvergence));
        }
        assert_eq!(
            rate(r(f64::NAN, 350.0, 0.06), &[], 0.5),
            Err(Glicko2Error::NotFinite)
        );
    }
}
