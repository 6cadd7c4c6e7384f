<?php
// /cpu.php?ms=N: spins on a CPU for N ms (0..10000) of wall time,
// then a fixed 5-byte body: a page whose cost is CPU, not waiting.
$ms = isset($_GET['ms']) ? max(0, min(10000, (int) $_GET['ms'])) : 0;
$until = hrtime(true) + $ms * 1000000;
$x = 0;
while (hrtime(true) < $until) {
    for ($i = 0; $i < 1000; $i++) {
        $x += $i * $i;
    }
}
header('Content-Type: text/plain');
echo "busy\n";
