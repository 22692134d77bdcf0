//! What a start leaves beside the pool, and what it refuses before it, on
//! memory and on real Redis: the mark that a search was started with a
//! ticket ([`TicketStore::started`]), and the mode's config checked
//! against the ticket ([`TicketStart::config`]).

use super::tests::{new_ticket, stores};
use super::{Hold, StartSearchError, Ticket, TicketStart, TicketStore};
use crate::pool::{wall_clock, AddSearchError, ModeKey, PlayerSearchScope};
use matchplane_matchmaker::{Code, GameModeConfig};

/// A ticket expiring ten minutes from the wall clock (the Redis mark is
/// trimmed by it).
fn fresh(id: &str, player: &str, mmr: f64) -> Ticket {
    let mut t = new_ticket(id, player);
    t.attributes.mmr = Some(mmr);
    t.created_at = wall_clock();
    t.expires_at = t.created_at + 600.0;
    t.into_ticket().unwrap()
}

fn start<'a>(
    mode: &'a ModeKey,
    t: &'a Ticket,
    config: Option<&'a GameModeConfig>,
) -> TicketStart<'a> {
    TicketStart {
        mode,
        ticket_id: &t.ticket_id,
        token_hash: &t.token_hash,
        now: wall_clock(),
        hold: Hold::Polled { poll_seconds: 30.0 },
        max_live: None,
        scope: PlayerSearchScope::Mode,
        config,
    }
}

/// `duel` as an MMR mode taking `maxMmr`.
fn duel(max_mmr: f64) -> GameModeConfig {
    serde_json::from_value(serde_json::json!({"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": max_mmr,
            "baseTolerance": 5, "expansionMultiplier": 2}}))
    .unwrap()
}

async fn started(tickets: &dyn TicketStore, t: &Ticket) -> bool {
    tickets.started(&t.project_id, &t.ticket_id).await.unwrap()
}

#[tokio::test]
async fn a_started_search_marks_its_ticket_and_a_refused_one_does_not() {
    for (pool, tickets) in stores().await {
        let mode = ModeKey::new("prj_t", "duel");
        let first = fresh("tkt_1", "p1", 1500.0);
        let never = fresh("tkt_2", "p2", 1500.0);
        let over_quota = fresh("tkt_3", "p3", 1500.0);
        for t in [&first, &never, &over_quota] {
            tickets.create(t, wall_clock()).await.unwrap();
            assert!(!started(tickets.as_ref(), t).await, "generated only");
        }
        tickets
            .start_search(&start(&mode, &first, None))
            .await
            .unwrap();
        assert!(started(tickets.as_ref(), &first).await);
        let limited = TicketStart {
            max_live: Some(1),
            ..start(&mode, &over_quota, None)
        };
        assert!(matches!(
            tickets.start_search(&limited).await,
            Err(StartSearchError::Add(AddSearchError::QuotaExceeded { .. }))
        ));
        assert!(!started(tickets.as_ref(), &over_quota).await, "refused");
        assert!(!started(tickets.as_ref(), &never).await);
        // The mark outlives the search's end.
        let ended = pool
            .end_search(&mode, &first.ticket_id, &crate::pool::EndOutcome::Cancelled)
            .await
            .unwrap();
        assert_eq!(ended, crate::pool::EndResult::Ended);
        assert!(started(tickets.as_ref(), &first).await);
    }
}

#[tokio::test]
async fn a_ticket_the_config_rules_out_starts_nothing() {
    for (pool, tickets) in stores().await {
        let mode = ModeKey::new("prj_t", "duel");
        let high = fresh("tkt_1", "p1", 2500.0);
        tickets.create(&high, wall_clock()).await.unwrap();
        let narrowed = duel(2000.0);
        match tickets
            .start_search(&start(&mode, &high, Some(&narrowed)))
            .await
        {
            Err(StartSearchError::RuledOut(e)) => {
                assert_eq!(
                    (e.code, e.field.as_str()),
                    (Code::MmrOutOfRange, "attributes.mmr")
                );
            }
            other => panic!("expected a ruled-out ticket, got {other:?}"),
        }
        assert!(pool.search_state(&mode, "tkt_1").await.unwrap().is_none());
        assert_eq!(pool.count_live("prj_t").await.unwrap(), 0);
        assert!(!started(tickets.as_ref(), &high).await);
        assert_eq!(tickets.pending("prj_t", wall_clock()).await.unwrap(), 1);
        // The config as it was takes it.
        let wide = duel(3000.0);
        tickets
            .start_search(&start(&mode, &high, Some(&wide)))
            .await
            .unwrap();
        assert!(started(tickets.as_ref(), &high).await);
    }
}
