# How far is generation 14's static value from fairy-stockfish depth 9 (the stored label), next to
# fairy-stockfish's own depth-1 search, on self-play positions and on positions of games against
# fairy-stockfish? All on the teacher's scale (manaka eval's cp x 2: the network learned
# l = teacher cp / 1200, eval reports 600 l). 120 records drawn with random.seed(7) from each file,
# mate-range scores left out. Run: python3 dist.py /work/arch/sp145-gen14-d9-s4.hcpe /work/arch/vs2-val.hcpe
# (M below: the release build of 8b489ef, generation 14 embedded).
import sys, json, subprocess, random, numpy as np, cshogi
sys.path.insert(0, '/work/main/scripts')
from versus import Usi
import os
M = '/work/q/manaka-base'
W = os.environ.get('WEIGHTS')  # another network than the embedded one (e.g. g20.mnw)
fs = Usi(['/usr/games/fairy-stockfish'], {"Threads": 1}, "fs")
for name in sys.argv[1:]:
    recs = np.fromfile(name, dtype=cshogi.HuffmanCodedPosAndEval)
    random.seed(7); idx = random.sample(range(len(recs)), 120)
    en, e1, d1n = [], [], []
    b = cshogi.Board()
    for i in idx:
        r = recs[i]; b.set_hcp(r['hcp']); sfen = b.sfen(); d9 = int(r['eval'])
        if abs(d9) > 3000: continue
        out = subprocess.run([M, 'eval', '--sfen', sfen, '--json'] + (['--weights', W] if W else []), capture_output=True, text=True)
        net = 2 * json.loads(out.stdout)['cp']
        fs.new_game(); d1 = fs.analyse(sfen, [], 'depth 1')[1]
        if d1 is None or abs(d1) > 3000: continue
        en.append((net, d9, d1))
    a = np.array(en, dtype=float); sg = lambda x: 1/(1+np.exp(-x/1200))
    net, d9, d1 = a[:,0], a[:,1], a[:,2]
    print(name.split('/')[-1], len(a), 'winprob abs err net %.3f d1 %.3f' % (np.mean(abs(sg(net)-sg(d9))), np.mean(abs(sg(d1)-sg(d9)))),
          'corr net %.2f d1 %.2f' % (np.corrcoef(net,d9)[0,1], np.corrcoef(d1,d9)[0,1]),
          'slope net %.2f d1 %.2f' % (np.polyfit(d9,net,1)[0], np.polyfit(d9,d1,1)[0]), 'sd d9 %d' % np.std(d9))
fs.close()
