//! The scheduler's incremental listing of the modes
//! ([`matchplane_worker::modes::Catalogue`]): a pass reads only what
//! changed, and a deletion still shows.

use crate::env::{mode_config, Env};
use chrono::Utc;
use matchplane_store::pool::ModeKey;
use matchplane_store::repos::game_modes;
use matchplane_worker::modes::{self, Catalogue, Changes};

/// The modes a pass found changed, with their versions.
fn versions(changes: &Changes) -> Vec<(ModeKey, i64)> {
    changes
        .changed
        .iter()
        .map(|(key, revision)| (key.clone(), revision.version))
        .collect()
}

#[tokio::test]
async fn a_pass_reports_only_new_changed_and_deleted_modes() {
    let env = Env::new(None, 1.0).await;
    let duel = ModeKey::new(env.project_id.clone(), "duel");
    let ranked = ModeKey::new(env.project_id.clone(), "ranked");
    let mut catalogue = Catalogue::default();

    let first = catalogue.refresh(&env.db).await.unwrap();
    assert!(first.full, "the first pass lists the whole table");
    assert_eq!(versions(&first), vec![(duel.clone(), 1)]);

    let quiet = catalogue.refresh(&env.db).await.unwrap();
    assert!(!quiet.full, "a later pass is incremental");
    assert!(quiet.changed.is_empty() && quiet.gone.is_empty());

    // Stamped ten seconds back (a late commit, a clock a little behind):
    // the overlap still finds it.
    let stamped = Utc::now() - chrono::Duration::seconds(10);
    game_modes::create(
        &env.db,
        &env.project_id,
        "ranked",
        mode_config("ranked", None, 1.0),
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        stamped,
    )
    .await
    .unwrap();
    let created = catalogue.refresh(&env.db).await.unwrap();
    assert!(!created.full);
    assert_eq!(versions(&created), vec![(ranked.clone(), 1)]);

    let mut config = mode_config("duel", None, 1.0);
    config["matchmakingCycleDurationSeconds"] = 2.0.into();
    game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
        .await
        .unwrap();
    let changed = catalogue.refresh(&env.db).await.unwrap();
    assert_eq!(versions(&changed), vec![(duel.clone(), 2)]);
    assert_eq!(catalogue.revision(&duel).map(|r| r.version), Some(2));

    game_modes::delete(&env.db, &env.project_id, "ranked")
        .await
        .unwrap();
    let deleted = catalogue.refresh(&env.db).await.unwrap();
    assert!(
        deleted.full,
        "a count below the catalogue's lists everything"
    );
    assert_eq!(deleted.gone, vec![ranked.clone()]);
    assert!(deleted.changed.is_empty());
    assert_eq!(catalogue.revision(&ranked), None);

    let after = catalogue.refresh(&env.db).await.unwrap();
    assert!(!after.full && after.changed.is_empty() && after.gone.is_empty());
}

/// A mode deleted and created again under its name between two passes
/// starts again at version 1, as the one deleted was: the pass still
/// reports it changed, and a config of the deleted one is read again,
/// never run for the new one (docs/game-modes.md, "Changing a mode").
#[tokio::test]
async fn a_mode_created_again_between_passes_is_a_change() {
    let env = Env::new(None, 1.0).await;
    let duel = ModeKey::new(env.project_id.clone(), "duel");
    let mut catalogue = Catalogue::default();
    catalogue.refresh(&env.db).await.unwrap();
    let old = modes::refresh(&env.db, &duel, None).await.unwrap().unwrap();
    assert_eq!(old.version, 1);

    game_modes::delete(&env.db, &env.project_id, "duel")
        .await
        .unwrap();
    let mut config = mode_config("duel", None, 1.0);
    config["matchmakingCycleDurationSeconds"] = 3.0.into();
    game_modes::create(
        &env.db,
        &env.project_id,
        "duel",
        config,
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        Utc::now(),
    )
    .await
    .unwrap();

    let pass = catalogue.refresh(&env.db).await.unwrap();
    assert_eq!(versions(&pass), vec![(duel.clone(), 1)]);
    assert_ne!(pass.changed[0].1.id, old.id, "the new row is listed");
    let new = modes::refresh(&env.db, &duel, Some(old.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_ne!(new.id, old.id);
    assert_eq!(new.config.matchmaking_cycle_duration_seconds, 3.0);
}
