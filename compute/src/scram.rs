//! SCRAM-SHA-256 verifier material for passwords (logins, CREATE ROLE ...
//! PASSWORD, the cluster's bootstrap user).

use common::Result;
use pgwire::api::auth::sasl::scram::gen_salted_password;

pub const SCRAM_ITERATIONS: usize = 4096;

/// SCRAM-SHA-256 material for a password: salt, salted password,
/// iterations.
pub fn password_verifier(password: &str) -> (Vec<u8>, Vec<u8>, u32) {
    let salt: [u8; 16] = rand::random();
    let salted = gen_salted_password(password, &salt, SCRAM_ITERATIONS);
    (salt.to_vec(), salted, SCRAM_ITERATIONS as u32)
}

/// Stores a user's SCRAM verifier material in meta.
pub async fn create_user(store: &meta::MetaStore, user: &str, password: &str) -> Result<()> {
    let (salt, salted, iterations) = password_verifier(password);
    store.put_user(user, &salt, &salted, iterations).await
}
