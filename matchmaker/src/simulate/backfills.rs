//! Backfill in virtual time: `leave` events take players out of the match
//! they are in and, with `backfill.enabled`, open (or widen) that match's
//! backfill; each cycle serves the open backfills before new matches, with
//! the same core pass the worker runs.

use crate::backfill::{OpenBackfill, ProposedFill};
use crate::config::GameModeConfig;
use crate::cycle::ProposedMatch;
use serde::Serialize;
use std::collections::HashMap;

/// One fill in the report: when, and who joined.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulatedFill {
    /// Virtual time of the cycle (seconds).
    pub at: f64,
    /// Player ids seated.
    pub players: Vec<String>,
}

/// One backfill in the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulatedBackfill {
    /// Index of the match in `matches`.
    #[serde(rename = "match")]
    pub match_index: usize,
    /// When the first leave opened it (seconds).
    pub opened_at: f64,
    /// `open`, `filled` or `expired` at the end of the run.
    pub status: String,
    /// Its fills, in order.
    pub fills: Vec<SimulatedFill>,
}

/// The backfill figures of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BackfillStats {
    /// Backfills opened.
    pub backfills: usize,
    /// Fills made.
    pub fills: usize,
    /// Seats opened by leaves.
    pub seats_opened: usize,
    /// Seats filled.
    pub seats_filled: usize,
    /// Seconds from a seat's leave to its fill, over filled seats.
    pub time_to_fill: super::Percentiles,
    /// `|newcomer MMR - roster mean|` of each filled player.
    pub fill_mmr_distance: super::Percentiles,
    /// `|player MMR - match mean|` of each player of ordinary matches.
    pub match_mmr_distance: super::Percentiles,
}

/// A match as the simulation keeps it for backfill.
struct Running {
    /// Per team: (player id, mmr) now on it.
    roster: Vec<Vec<(String, Option<f64>)>>,
    caps: Vec<u32>,
    pings: Vec<f64>,
    region: Option<arcstr::ArcStr>,
    backfill: Option<usize>,
    /// Each player's declared values, by player id (docs/rules.md#backfill).
    values: HashMap<String, crate::rules::DeclaredValues>,
    /// Each player's role seat in a role queue, by player id.
    roles: HashMap<String, arcstr::ArcStr>,
    /// Per team, the roles of the bot seats no fill takes.
    kept_bots: Vec<Vec<arcstr::ArcStr>>,
}

impl Running {
    /// The open role seats its roster leaves (docs/rules.md, "Backfill by
    /// role"); empty without `composition`.
    fn open_roles(&self, config: &GameModeConfig) -> Vec<crate::roles::open::OpenRoles> {
        let Some(composition) = &config.composition else {
            return Vec::new();
        };
        let held: Vec<Vec<&str>> = self
            .roster
            .iter()
            .enumerate()
            .map(|(t, team)| {
                let bots = self.kept_bots.get(t).into_iter().flatten();
                team.iter()
                    .filter_map(|(id, _)| self.roles.get(id).map(|r| r.as_str()))
                    .chain(bots.map(|r| r.as_str()))
                    .collect()
            })
            .collect();
        crate::roles::open::open_roles(composition, &held).unwrap_or_default()
    }

    /// The roster under the rules: its players now, with their values.
    fn roster_values(&self) -> crate::rules::RosterValues {
        let players = self
            .roster
            .iter()
            .flatten()
            .map(|(id, _)| crate::rules::RosterMember {
                player_id: id.clone(),
                attributes: self.values.get(id).cloned().unwrap_or_default(),
            })
            .collect();
        crate::rules::RosterValues {
            attributes: Default::default(),
            players,
        }
    }
}

/// A backfill's live state in the simulation.
struct Live {
    report: SimulatedBackfill,
    open: OpenBackfill,
    /// When each open seat opened, per team (oldest first).
    opened: Vec<Vec<f64>>,
}

/// Every running match and backfill of a run.
#[derive(Default)]
pub(super) struct Backfiller {
    running: Vec<Running>,
    where_is: HashMap<String, usize>,
    live: Vec<Live>,
    seats_opened: usize,
    time_to_fill: Vec<f64>,
    fill_distance: Vec<f64>,
    match_distance: Vec<f64>,
}

impl Backfiller {
    /// Remembers match `index` made as `m`.
    pub(super) fn matched(&mut self, m: &ProposedMatch) {
        let index = self.running.len();
        let mut roster = Vec::with_capacity(m.teams.len());
        let mut values = HashMap::new();
        let mut roles = HashMap::new();
        let mut pings = Vec::new();
        let all: Vec<f64> = m
            .teams
            .iter()
            .flat_map(|t| t.players.iter().filter_map(|p| p.mmr))
            .collect();
        let mean = crate::mean::mean(&all);
        for team in &m.teams {
            let mut players = Vec::new();
            for p in &team.players {
                self.where_is.insert(p.player_id.to_string(), index);
                players.push((p.player_id.to_string(), p.mmr));
                if !p.attributes.is_empty() {
                    values.insert(p.player_id.to_string(), p.attributes.to_values());
                }
                if let Some(role) = &p.role {
                    roles.insert(p.player_id.to_string(), role.clone());
                }
                pings.extend(p.ping_ms);
                if let (Some(mmr), Some(mean)) = (p.mmr, mean) {
                    self.match_distance.push((mmr - mean).abs());
                }
            }
            roster.push(players);
        }
        // A team's seats a roster may fill: the shape it was made with and
        // its open seats, less its bots (a bot match's shape counts them;
        // replaceable ones are among the open seats).
        let caps = if m.match_shape.is_empty() {
            m.teams.iter().map(|t| t.players.len() as u32).collect()
        } else {
            m.match_shape
                .iter()
                .zip(&m.seats_open)
                .enumerate()
                .map(|(t, (s, o))| {
                    let bots = m.teams.get(t).map_or(0, |team| team.bots);
                    (s + o).saturating_sub(bots)
                })
                .collect()
        };
        // The roles of the bots that keep their seats (not replaceable:
        // none of their seats is open).
        let kept_bots = m
            .teams
            .iter()
            .zip(m.seats_open.iter().chain(std::iter::repeat(&0)))
            .map(|(team, open)| {
                let kept = team.bots.saturating_sub(*open) as usize;
                team.bot_roles.iter().take(kept).cloned().collect()
            })
            .collect();
        self.running.push(Running {
            roster,
            caps,
            pings,
            region: m.region.clone(),
            backfill: None,
            values,
            roles,
            kept_bots,
        });
    }

    /// Takes `players` out of their matches at `t`, opening or widening
    /// the matches' backfills when `config` has backfill on.
    pub(super) fn leave(&mut self, config: &GameModeConfig, players: &[String], t: f64) {
        let ttl = config.backfill_enabled().map(|b| f64::from(b.ttl_seconds));
        for player in players {
            let Some(index) = self.where_is.remove(player) else {
                continue;
            };
            let running = &mut self.running[index];
            let Some(team) = running
                .roster
                .iter()
                .position(|t| t.iter().any(|(p, _)| p == player))
            else {
                continue;
            };
            running.roster[team].retain(|(p, _)| p != player);
            let Some(ttl) = ttl else { continue };
            self.seats_opened += 1;
            let mean = roster_mean(&running.roster);
            let reuse = running.backfill.filter(|b| {
                self.live[*b].report.status == "open" && t < self.live[*b].open.expires_at
            });
            match reuse {
                Some(b) => {
                    let live = &mut self.live[b];
                    live.open.open_seats[team] += 1;
                    live.open.mean_mmr = mean;
                    live.open.roster = running.roster_values();
                    live.open.open_roles = running.open_roles(config);
                    live.open.revision += 1;
                    live.opened[team].push(t);
                }
                None => {
                    let open_seats: Vec<u32> = running
                        .caps
                        .iter()
                        .zip(&running.roster)
                        .map(|(c, r)| c.saturating_sub(r.len() as u32))
                        .collect();
                    // Every open seat (this leave's, and any the match was
                    // made with) counts from now.
                    let opened: Vec<Vec<f64>> =
                        open_seats.iter().map(|n| vec![t; *n as usize]).collect();
                    let b = self.live.len();
                    self.live.push(Live {
                        report: SimulatedBackfill {
                            match_index: index,
                            opened_at: t,
                            status: "open".into(),
                            fills: Vec::new(),
                        },
                        open: OpenBackfill {
                            backfill_id: format!("bf_{b:08}").into(),
                            match_id: format!("m{index}").into(),
                            revision: 1,
                            open_seats,
                            opened_at: t,
                            expires_at: t + ttl,
                            mean_mmr: mean,
                            pings: running.pings.clone(),
                            region: running.region.clone(),
                            roster: running.roster_values(),
                            open_roles: running.open_roles(config),
                        },
                        opened,
                    });
                    running.backfill = Some(b);
                }
            }
        }
    }

    /// The backfills open at `t` (expired ones are marked so).
    pub(super) fn open_at(&mut self, t: f64) -> Vec<OpenBackfill> {
        let mut open = Vec::new();
        for live in &mut self.live {
            if live.report.status != "open" {
                continue;
            }
            if t >= live.open.expires_at {
                live.report.status = "expired".into();
                continue;
            }
            open.push(live.open.clone());
        }
        open
    }

    /// Applies the cycle's fills at `t`.
    pub(super) fn filled(&mut self, fills: &[ProposedFill], t: f64) {
        for fill in fills {
            let Some(b) = self
                .live
                .iter()
                .position(|l| l.open.backfill_id == fill.backfill_id)
            else {
                continue;
            };
            let index = self.live[b].report.match_index;
            let mut players = Vec::new();
            for team in &fill.teams {
                for p in &team.players {
                    if let (Some(mmr), Some(mean)) = (p.mmr, self.live[b].open.mean_mmr) {
                        self.fill_distance.push((mmr - mean).abs());
                    }
                    let opened = &mut self.live[b].opened[team.index];
                    if !opened.is_empty() {
                        self.time_to_fill.push(t - opened.remove(0));
                    }
                    let running = &mut self.running[index];
                    running.roster[team.index].push((p.player_id.to_string(), p.mmr));
                    if !p.attributes.is_empty() {
                        running
                            .values
                            .insert(p.player_id.to_string(), p.attributes.to_values());
                    }
                    if let Some(role) = &p.role {
                        running.roles.insert(p.player_id.to_string(), role.clone());
                    }
                    self.where_is.insert(p.player_id.to_string(), index);
                    players.push(p.player_id.to_string());
                }
            }
            let live = &mut self.live[b];
            live.open.open_seats = fill.open_seats_left.clone();
            live.open.open_roles = fill.open_roles_left.clone();
            live.open.revision += 1;
            live.open.mean_mmr = roster_mean(&self.running[index].roster);
            live.open.roster = self.running[index].roster_values();
            live.report.fills.push(SimulatedFill { at: t, players });
            if live.open.seats_left() == 0 {
                live.report.status = "filled".into();
            }
        }
    }

    /// Whether a backfill is still open (a cycle may fill or expire it).
    pub(super) fn any_open(&self) -> bool {
        self.live.iter().any(|l| l.report.status == "open")
    }

    /// The report's backfills and figures.
    pub(super) fn finish(self) -> (Vec<SimulatedBackfill>, BackfillStats) {
        let fills = self.live.iter().map(|l| l.report.fills.len()).sum();
        let stats = BackfillStats {
            backfills: self.live.len(),
            fills,
            seats_opened: self.seats_opened,
            seats_filled: self.time_to_fill.len(),
            time_to_fill: super::Percentiles::of(&self.time_to_fill),
            fill_mmr_distance: super::Percentiles::of(&self.fill_distance),
            match_mmr_distance: super::Percentiles::of(&self.match_distance),
        };
        (self.live.into_iter().map(|l| l.report).collect(), stats)
    }
}

fn roster_mean(roster: &[Vec<(String, Option<f64>)>]) -> Option<f64> {
    let mmrs: Vec<f64> = roster.iter().flatten().filter_map(|(_, m)| *m).collect();
    crate::mean::mean(&mmrs)
}
