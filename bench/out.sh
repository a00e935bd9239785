# shellcheck shell=bash
# Where `make bench` keeps what it measured: its text (bench.txt) and, beside it,
# the pictures drawn from the CSV files the bench scripts write. Source it after
# setting ROOT.
BENCH_OUT=${BENCH_OUT:-$ROOT/build/bench}
mkdir -p "$BENCH_OUT"

# bench_plot KIND NAME: $BENCH_OUT/NAME.svg from $BENCH_OUT/NAME.csv (bench/plot_svg.py KIND).
bench_plot() {
	/usr/bin/python3 "$ROOT/bench/plot_svg.py" "$1" "$BENCH_OUT/$2.csv" "$BENCH_OUT/$2.svg" &&
		echo "picture: $BENCH_OUT/$2.svg"
}
