//! Each project's share of a worker's in-flight webhook attempts: one
//! studio with many slow endpoints (each capped on its own) still holds at
//! most its share, so every other studio finds free slots.

use matchplane_webhook::dispatcher::{EndpointLimits, DEFAULT_MAX_ENDPOINTS};
use std::collections::HashSet;
use tokio::sync::OwnedSemaphorePermit;

/// How many parts of a worker's in-flight attempts one project may hold at
/// most: a quarter of them ([`project_share`]).
pub const PROJECT_SHARE_DIVISOR: usize = 4;

/// Attempts one project may have in flight on a worker that runs at most
/// `max_in_flight` attempts, `per_endpoint` of them to one endpoint: a
/// quarter of `max_in_flight`, at least `per_endpoint` (a project with one
/// endpoint keeps that endpoint's whole cap), at most `max_in_flight`, at
/// least 1. For the defaults (256 and 4) that is 64 attempts.
pub fn project_share(max_in_flight: usize, per_endpoint: usize) -> usize {
    (max_in_flight / PROJECT_SHARE_DIVISOR)
        .max(per_endpoint)
        .min(max_in_flight)
        .max(1)
}

/// Per-project caps of the delivery loop: the dispatcher's keyed
/// semaphores ([`EndpointLimits`], a bounded map) keyed by project id, and
/// the projects holding slots now; owned by the loop alone.
///
/// The set stays bounded: a project is forgotten once it has no attempt
/// in flight ([`ProjectSlots::full`], at each turn of the loop), so it
/// holds at most the projects of the in-flight attempts plus those of one
/// claim.
#[derive(Debug)]
pub(crate) struct ProjectSlots {
    limits: EndpointLimits,
    holding: HashSet<String>,
}

impl ProjectSlots {
    /// At most `per_project` (at least 1) attempts in flight per project.
    pub(crate) fn new(per_project: usize) -> Self {
        Self {
            limits: EndpointLimits::new(per_project, DEFAULT_MAX_ENDPOINTS),
            holding: HashSet::new(),
        }
    }

    /// Attempts in flight allowed to one project.
    pub(crate) fn per_project(&self) -> usize {
        self.limits.per_endpoint()
    }

    /// A slot of `project` if it has one free now, without waiting; the
    /// slot is free again when the permit is dropped.
    pub(crate) fn try_acquire(&mut self, project: &str) -> Option<OwnedSemaphorePermit> {
        let slot = self.limits.try_acquire(project);
        if slot.is_some() && !self.holding.contains(project) {
            self.holding.insert(project.to_owned());
        }
        slot
    }

    /// The projects holding their whole share now (to leave out of the next
    /// claim); forgets the projects with nothing in flight.
    pub(crate) fn full(&mut self) -> Vec<String> {
        let limits = &self.limits;
        self.holding.retain(|project| limits.in_flight(project));
        // A slot taken and dropped at once: is the project still full?
        self.holding
            .iter()
            .filter(|project| limits.try_acquire(project).is_none())
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_gets_a_quarter_and_at_least_an_endpoints_cap() {
        assert_eq!(project_share(256, 4), 64);
        assert_eq!(project_share(8, 2), 2);
        assert_eq!(project_share(8, 4), 4);
        assert_eq!(project_share(2, 4), 2);
        assert_eq!(project_share(0, 0), 1);
    }

    #[test]
    fn a_project_is_capped_and_forgotten_when_idle() {
        let mut slots = ProjectSlots::new(2);
        let one = slots.try_acquire("prj_slow");
        let two = slots.try_acquire("prj_slow");
        assert!(one.is_some() && two.is_some());
        assert!(slots.try_acquire("prj_slow").is_none(), "a third waits");
        let other = slots.try_acquire("prj_fast");
        assert!(other.is_some(), "another project does not wait");
        assert_eq!(slots.full(), vec!["prj_slow".to_owned()]);
        drop((one, two, other));
        assert!(slots.full().is_empty());
        assert!(slots.holding.is_empty(), "idle projects are forgotten");
    }
}
