<?php
// A body of 100..2000 'x' bytes, a different length on (almost) every request.
header('Content-Type: text/plain');
echo str_repeat('x', mt_rand(100, 2000));
