"""Study mode: controlled human studies with the arena, described by one study file (bargain.study.config)."""
