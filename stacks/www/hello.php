<?php
// Fixed body: 12 bytes.
header('Content-Type: text/plain');
echo "hello world\n";
