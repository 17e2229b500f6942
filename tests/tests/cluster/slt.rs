//! SQL behaviour as sqllogictest files (`tests/slt/*.slt`), run through node 1.

use super::*;

pub(crate) async fn run_slt(cluster: &TestCluster) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("slt");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("slt dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "slt"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for f in files {
        let url = cluster.pg_url(0);
        let mut runner = sqllogictest::Runner::new(move || {
            let url = url.clone();
            async move {
                let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                    .await
                    .map_err(tests::PgError)?;
                tokio::spawn(async move {
                    let _ = conn.await;
                });
                Ok(PgDb { client })
            }
        });
        println!("slt: {}", f.display());
        if let Err(e) = runner.run_file_async(&f).await {
            panic!("{}: {e}", f.display());
        }
    }
}
