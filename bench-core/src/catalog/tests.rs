use super::*;

#[test]
fn strategy_names_parse() {
    for s in Strategy::ALL {
        assert_eq!(s.name().parse::<Strategy>().unwrap(), s);
    }
    assert_eq!(
        "fast".parse::<Strategy>().unwrap_err().to_string(),
        "unknown strategy \"fast\" (known: inline, spawn_blocking, interact, worker, spin, block_in_place, wait_aside)"
    );
}

#[test]
fn subjects_name_their_backend_and_harness() {
    assert_eq!(
        Subject::Middleware(Strategy::Spin).backend(),
        "rusqlite worker pool"
    );
    assert_eq!(
        Subject::Middleware(Strategy::Inline).backend(),
        "deadpool-sqlite"
    );
    assert_eq!(Subject::Pool(Pool::Deadpool).strategy(), None);
    assert_eq!(Subject::SqlxPostgres.harness(), Harness::Sqlx);
    let spec = BenchSpec::whole("m", Subject::Middleware(Strategy::Worker), "op", "about");
    let json = serde_json::to_value(spec).unwrap();
    assert_eq!(json["backend"], "rusqlite worker pool");
    assert_eq!(json["strategy"], "worker");
    assert_eq!(json["harness"], "core");
}

/// Each word of the `pool` knob names its pool whatever the strategy (`auto` alone follows the
/// strategy), so that a strategy asked onto another pool's connections is told it cannot run
/// there rather than quietly put back on its own.
#[test]
fn each_pool_word_names_its_pool_for_every_strategy() {
    let words = [
        ("deadpool-sqlite", Pool::Deadpool),
        ("workers", Pool::Workers),
        ("r2d2", Pool::R2d2),
        ("bb8", Pool::Bb8),
        ("none", Pool::None),
        ("slots", Pool::Slots),
        ("thread", Pool::Thread),
    ];
    let crate::knobs::KnobKind::Choice { choices, .. } = POOL.kind else {
        panic!("a choice knob")
    };
    for s in Strategy::ALL {
        for (word, pool) in words {
            assert_eq!(Pool::chosen(word, s), pool, "{word} for {}", s.name());
        }
        assert_eq!(Pool::chosen("auto", s), s.pool(), "auto for {}", s.name());
    }
    // Every pool is named by a word, and the knob offers every word and auto.
    assert_eq!(words.len(), Pool::ALL.len());
    let mut offered: Vec<&str> = words.iter().map(|(w, _)| *w).collect();
    offered.push("auto");
    offered.sort();
    let mut knob = choices.to_vec();
    knob.sort();
    assert_eq!(knob, offered);
    assert_eq!(
        pool_mismatch("deadpool-sqlite", Strategy::Worker).as_deref(),
        Some(
            "worker does not dispatch on deadpool-sqlite (pool=deadpool-sqlite; it runs on rusqlite worker pool)"
        )
    );
    assert_eq!(
        pool_mismatch("workers", Strategy::Inline).as_deref(),
        Some(
            "inline does not dispatch on rusqlite worker pool (pool=workers; it runs on deadpool-sqlite, r2d2_sqlite, bb8, no pool, lock-free slots, a connection per thread)"
        )
    );
}
