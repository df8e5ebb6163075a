# Uniform from 1 KB to 100 KB (check_closed.toml's mice): size in bytes, cumulative probability.
1000 0
100000 1
