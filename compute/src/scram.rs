//! SCRAM-SHA-256 verifiers of passwords (logins, CREATE ROLE ...
//! PASSWORD, the cluster's bootstrap user): only the verifier (salt,
//! iterations, StoredKey, ServerKey) is kept, as PostgreSQL keeps it.

use common::Result;
use meta::ScramVerifier;
use pgwire::api::auth::sasl::scram::gen_salted_password;

pub const SCRAM_ITERATIONS: usize = 4096;

/// The SCRAM-SHA-256 verifier of a password, with a new random salt.
pub fn password_verifier(password: &str) -> ScramVerifier {
    let salt: [u8; 16] = rand::random();
    let salted = gen_salted_password(password, &salt, SCRAM_ITERATIONS);
    ScramVerifier::from_salted_password(salt.to_vec(), &salted, SCRAM_ITERATIONS as u32)
}

/// Stores a superuser's SCRAM verifier in meta.
pub async fn create_user(store: &meta::MetaStore, user: &str, password: &str) -> Result<()> {
    store.put_user(user, &password_verifier(password)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tessera's verifier is the one pgwire derives, so a client that
    /// knows the password passes pgwire's SCRAM exchange against it.
    #[test]
    fn verifier_matches_pgwire() {
        use pgwire::api::auth::sasl::scram::ScramSecret;
        let v = password_verifier("pässwörd");
        let salted = gen_salted_password("pässwörd", &v.salt, SCRAM_ITERATIONS);
        match ScramSecret::verifier_from_salted_password(v.salt.clone(), salted, SCRAM_ITERATIONS) {
            ScramSecret::Verifier {
                stored_key,
                server_key,
                ..
            } => {
                assert_eq!(stored_key, v.stored_key);
                assert_eq!(server_key, v.server_key);
            }
            other => panic!("{other:?}"),
        }
    }
}
