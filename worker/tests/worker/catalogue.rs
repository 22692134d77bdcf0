//! The scheduler's incremental listing of the modes
//! ([`matchplane_worker::modes::Catalogue`]): a pass reads only what
//! changed, and a deletion still shows.

use crate::env::{mode_config, Env};
use chrono::Utc;
use matchplane_store::pool::ModeKey;
use matchplane_store::repos::game_modes;
use matchplane_worker::modes::Catalogue;

#[tokio::test]
async fn a_pass_reports_only_new_changed_and_deleted_modes() {
    let env = Env::new(None, 1.0).await;
    let duel = ModeKey::new(env.project_id.clone(), "duel");
    let ranked = ModeKey::new(env.project_id.clone(), "ranked");
    let mut catalogue = Catalogue::default();

    let first = catalogue.refresh(&env.db).await.unwrap();
    assert!(first.full, "the first pass lists the whole table");
    assert_eq!(first.changed, vec![(duel.clone(), 1)]);

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
    assert_eq!(created.changed, vec![(ranked.clone(), 1)]);

    let mut config = mode_config("duel", None, 1.0);
    config["matchmakingCycleDurationSeconds"] = 2.0.into();
    game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
        .await
        .unwrap();
    let changed = catalogue.refresh(&env.db).await.unwrap();
    assert_eq!(changed.changed, vec![(duel.clone(), 2)]);
    assert_eq!(catalogue.version(&duel), Some(2));

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
    assert_eq!(catalogue.version(&ranked), None);

    let after = catalogue.refresh(&env.db).await.unwrap();
    assert!(!after.full && after.changed.is_empty() && after.gone.is_empty());
}
