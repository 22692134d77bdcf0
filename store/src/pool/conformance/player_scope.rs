//! Cases of the `playerSearchScope` project setting (docs/acceptance.md): with
//! `project`, one live search per player over all the project's modes,
//! held or proposed, checked in the add step itself.

use std::sync::Arc;

use super::{lease, mode, solo, FAR};
use crate::pool::{
    AddSearchError, Claim, ClaimOutcome, EndOutcome, ModeKey, PlayerSearchScope, PoolStore,
    ProposalClaim,
};

const PROJECT: PlayerSearchScope = PlayerSearchScope::Project;

async fn add(
    store: &dyn PoolStore,
    m: &ModeKey,
    ticket: &str,
    player: &str,
    scope: PlayerSearchScope,
) -> Result<(), AddSearchError> {
    store
        .add_search_scoped(m, &solo(ticket, player), FAR, None, scope, false)
        .await
}

/// The `(ticketId, gameMode)` a refusal names.
fn refused_by(result: Result<(), AddSearchError>) -> (String, String) {
    match result {
        Err(AddSearchError::PlayerAlreadySearching {
            ticket_id,
            game_mode,
        }) => (ticket_id, game_mode),
        other => panic!("expected PLAYER_ALREADY_SEARCHING, got {other:?}"),
    }
}

pub async fn project_scope_holds_one_search_per_player_across_modes(store: Arc<dyn PoolStore>) {
    let (ranked, casual, arena) = (mode("ranked"), mode("casual"), mode("arena"));
    add(store.as_ref(), &ranked, "t1", "p1", PROJECT)
        .await
        .unwrap();
    // Refused in every other mode, naming the live search and its mode.
    assert_eq!(
        refused_by(add(store.as_ref(), &casual, "t2", "p1", PROJECT).await),
        ("t1".to_owned(), "ranked".to_owned())
    );
    assert_eq!(
        refused_by(add(store.as_ref(), &ranked, "t3", "p1", PROJECT).await),
        ("t1".to_owned(), "ranked".to_owned())
    );
    // Nothing of the refused adds stayed behind.
    assert_eq!(store.count_live("prj_a").await.unwrap(), 1);
    assert_eq!(
        store.live_ticket_of_player(&casual, "p1").await.unwrap(),
        None
    );
    // Other players, and the same player in another project, are free.
    add(store.as_ref(), &casual, "t4", "p2", PROJECT)
        .await
        .unwrap();
    let elsewhere = ModeKey::new("prj_b", "casual");
    add(store.as_ref(), &elsewhere, "t5", "p1", PROJECT)
        .await
        .unwrap();
    // The default scope keeps one search per mode only.
    add(store.as_ref(), &arena, "t6", "p1", PlayerSearchScope::Mode)
        .await
        .unwrap();
    // Once the search ended, the player may search in another mode.
    store
        .end_search(&ranked, "t1", &EndOutcome::Cancelled)
        .await
        .unwrap();
    store
        .end_search(&arena, "t6", &EndOutcome::Cancelled)
        .await
        .unwrap();
    add(store.as_ref(), &casual, "t2", "p1", PROJECT)
        .await
        .unwrap();
}

pub async fn project_scope_counts_proposed_searches_not_matched_ones(store: Arc<dyn PoolStore>) {
    let (ranked, casual) = (mode("ranked"), mode("casual"));
    add(store.as_ref(), &ranked, "t1", "p1", PROJECT)
        .await
        .unwrap();
    add(store.as_ref(), &ranked, "t2", "p2", PROJECT)
        .await
        .unwrap();
    let token = lease(store.as_ref(), &ranked).await;
    let held = store
        .propose_many(
            &ranked,
            token,
            &[ProposalClaim {
                claim: super::claim_of("mat_1", &["t1", "t2"]),
                parties: vec!["t1".into(), "t2".into()],
                accept_by: FAR,
                cooldown_seconds: 0.0,
            }],
        )
        .await
        .unwrap();
    assert!(matches!(held[0], ClaimOutcome::Claimed { .. }), "{held:?}");
    // Proposed: still searching, so refused in another mode.
    assert_eq!(
        refused_by(add(store.as_ref(), &casual, "t3", "p1", PROJECT).await),
        ("t1".to_owned(), "ranked".to_owned())
    );
    // Matched (a mode without assignment): free to search elsewhere.
    add(store.as_ref(), &ranked, "t4", "p4", PROJECT)
        .await
        .unwrap();
    add(store.as_ref(), &ranked, "t5", "p5", PROJECT)
        .await
        .unwrap();
    let claim: Claim = super::claim_of("mat_2", &["t4", "t5"]);
    let out = store.claim(&ranked, token, &claim).await.unwrap();
    assert!(matches!(out, ClaimOutcome::Claimed { .. }), "{out:?}");
    add(store.as_ref(), &casual, "t6", "p4", PROJECT)
        .await
        .unwrap();
}

pub async fn project_scope_adds_racing_in_two_modes_keep_one(store: Arc<dyn PoolStore>) {
    for round in 0..20 {
        let player = format!("racer{round}");
        let modes: Vec<ModeKey> = ["ranked", "casual", "arena", "duel"]
            .iter()
            .map(|name| mode(name))
            .collect();
        let adds = modes.iter().enumerate().map(|(i, m)| {
            let store = store.clone();
            let (m, player) = (m.clone(), player.clone());
            tokio::spawn(async move {
                add(
                    store.as_ref(),
                    &m,
                    &format!("t{round}_{i}"),
                    &player,
                    PROJECT,
                )
                .await
            })
        });
        let results = futures::future::join_all(adds).await;
        let ok = results
            .into_iter()
            .map(|r| r.unwrap())
            .filter(|r| r.is_ok())
            .count();
        assert_eq!(ok, 1, "round {round}: {ok} searches of one player");
    }
}
