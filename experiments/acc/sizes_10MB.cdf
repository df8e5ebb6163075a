# Every flow 10 MB (check_closed.toml's elephants): size in bytes, cumulative probability.
10000000 0
10000000 1
