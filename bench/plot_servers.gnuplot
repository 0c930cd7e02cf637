# Plots for bench/bench_servers.py (bench/README.md, section "Servers").
#   gnuplot -e "dir='build/bench'" bench/plot_servers.gnuplot
# Reads dir/servers-{echo,https,memory}.dat and writes dir/servers-*.png. The
# .dat files have one column per (size, connections) cell, as many as the
# run measured, so the column count is read from their first line; "-" is a
# cell not measured (a server not built shows as an empty cluster).
if (!exists("dir")) dir = "build/bench"
if (!exists("stamp")) stamp = ""

set terminal pngcairo size 1100,560 font "DejaVu Sans,11" noenhanced
set style data histograms
set style histogram clustered gap 1
set datafile missing "-"
set style fill solid 0.85 border -1
set boxwidth 0.9 relative
set grid ytics lc rgb "#cccccc"
set key outside bottom center horizontal
set xtics nomirror
set ytics nomirror
set border 3

have(f) = system(sprintf("test -s '%s' && echo 1 || echo 0", f)) + 0
ncols(f) = system(sprintf("awk 'NR==1 {print NF; exit}' '%s'", f)) + 0

f = dir . "/servers-echo.dat"
if (have(f)) {
  n = ncols(f)
  set output dir . "/servers-echo.png"
  set title "Echo, ARIA-128-GCM: messages per server CPU-second (size@connections; log scale) " . stamp
  set ylabel "messages / server CPU-s (higher is better)"
  set logscale y
  plot for [i=2:n] f using i:xtic(1) title columnheader(i)
  unset logscale y
}

f = dir . "/servers-https.dat"
if (have(f)) {
  n = ncols(f)
  set output dir . "/servers-https.png"
  set title "Static files over HTTPS, keep-alive: requests per server CPU-second (file@connections; log scale) " . stamp
  set ylabel "requests / server CPU-s (higher is better)"
  set logscale y
  set xtics rotate by -20
  plot for [i=2:n] f using i:xtic(1) title columnheader(i)
  unset logscale y
  set xtics norotate
}

f = dir . "/servers-memory.dat"
if (have(f)) {
  set output dir . "/servers-memory.png"
  set title "Server RSS per idle connection after the handshake, ARIA-128-GCM " . stamp
  set ylabel "KiB per connection (lower is better)"
  set yrange [0:*]
  set key off
  plot f using 2:xtic(1) lc rgb "#17becf", \
       '' using 0:2:(sprintf("%.1f", $2)) with labels offset 0,0.7 font ",9" notitle
}
