"""What is kept: the database of games, seats and studies (store, with its schema's upgrades in migrations), what a
`--db` flag names (database), and copies on the Hugging Face Hub (publish)."""
