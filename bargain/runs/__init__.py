"""Games played in batches: the one loop that plays games to their end (episodes), a grid played into a run
directory (batch) with its log of games (gamelog), judging a run (judging), reports that set runs side by side
(report), and the engine's contract checked by random play (check)."""
