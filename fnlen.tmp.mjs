import ts from 'typescript';
import fs from 'node:fs';
import path from 'node:path';
const root = process.argv[2];
function walk(d, out=[]) { for (const e of fs.readdirSync(d,{withFileTypes:true})) { const p=path.join(d,e.name); if (e.isDirectory()) walk(p,out); else if (p.endsWith('.ts')) out.push(p);} return out; }
const res=[];
for (const f of walk(path.join(root,'src'))) {
  const sf = ts.createSourceFile(f, fs.readFileSync(f,'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (n) => {
    if (ts.isFunctionLike(n) && 'body' in n && n.body) {
      const s = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line, e = sf.getLineAndCharacterOfPosition(n.end).line;
      const len = e - s + 1;
      if (len > 80) { let name = n.name?.getText(sf); if (!name && n.parent && ts.isVariableDeclaration(n.parent)) name = n.parent.name.getText(sf); if(!name && ts.isPropertyAssignment(n.parent)) name=n.parent.name.getText(sf); res.push([len, path.relative(root,f)+':'+(s+1), name ?? '<anon>']); }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
}
res.sort((a,b)=>b[0]-a[0]); for (const r of res) console.log(r.join('  '));
console.error(res.length);
